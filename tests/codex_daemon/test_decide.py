"""The attribution rules over recorded process snapshots (no processes, no /proc).

The snapshots are shaped like what probe.py records from a real Codex 0.171.0
daemon: the daemon's argv, the clients' argv, cwd and LICH_* environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from lich_hooks.hook.shared.codex import decide
from lich_hooks.hook.shared.codex.decide import Client, runner

CODEX = "/home/u/.npm/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-linux/bin/codex"
DAEMON_ARGV = [
    "/home/u/.codex/packages/app-server-daemon/releases/0.171.0-x86_64-unknown-linux-musl/bin/codex",
    "app-server",
    "--listen",
    "unix://",
    "--analytics-default-enabled",
    "--managed-daemon",
]
SH = ["/bin/sh", "-lc", "lich-hook SessionStart codex"]


def card(name: str, port: str = "4711", token: str = "tok-" + "x" * 8) -> dict[str, str]:
    return {"LICH_SESSION_ID": name, "LICH_PORT": port, "LICH_TOKEN": token}


def tui(pid: int, cwd: str | None, lich: dict[str, str] | None, *args: str) -> Client:
    return Client(pid, [CODEX, *args], cwd, lich)


# --- who runs the hook ------------------------------------------------------------------


def test_the_daemon_runs_the_hook() -> None:
    found = runner([(900, SH), (800, DAEMON_ARGV), (700, [CODEX]), (10, ["bash"])])
    assert (found.kind, found.pid) == (decide.DAEMON, 800)


def test_a_tui_without_the_daemon_runs_its_own_hooks() -> None:
    found = runner([(900, SH), (700, [CODEX, "--no-daemon"]), (10, ["bash"])])
    assert found.kind == decide.OWN


def test_codex_exec_runs_its_own_hooks() -> None:
    assert runner([(900, SH), (700, [CODEX, "exec", "hi"])]).kind == decide.OWN


def test_the_nearest_codex_decides() -> None:
    """`codex exec` run by a tool command of a daemon-run conversation: its own hooks are its."""
    chain = [(900, SH), (850, [CODEX, "exec", "x"]), (840, ["bash"]), (800, DAEMON_ARGV)]
    assert runner(chain).kind == decide.OWN


def test_no_codex_above_is_the_hook_s_own_environment() -> None:
    assert runner([(900, SH), (10, ["bash"])]).kind == decide.OWN


def test_an_unreadable_ancestry_is_unknown() -> None:
    assert runner(None).kind == decide.UNKNOWN


def test_any_app_server_counts_as_shared() -> None:
    stdio = [CODEX, "app-server"]
    assert runner([(900, SH), (800, stdio)]).kind == decide.DAEMON


def test_npm_s_node_wrapper_is_not_codex() -> None:
    node = ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"]
    assert not decide.is_codex(node)
    assert decide.is_codex(["codex"]) and decide.is_codex(["C:\\bin\\codex.exe", "exec"])


# --- which card: the gate at the hook, then the daemon's log ----------------------------

S1 = "01a22c98-20ca-7d42-901e-335193cd8a04"
CONNECT = 1000.0


def ties(
    clients: list[Client], connects: list[decide.Connect], opened: Mapping[int, decide.Opened]
) -> dict[int, decide.Tie]:
    """Each client's tie, the log read to CONNECT + 6 and whole."""
    return {c.pid: decide.tie(c, CONNECT + 6, 0.0, connects, opened, 0.0, {}) for c in clients}


def judged(clients: list[Client], opened: Mapping[int, decide.Opened]) -> decide.Attribution:
    """The thread connection 5 started, each client connected at CONNECT + its index."""
    connects = [(CONNECT + n * 0.3, c.pid) for n, c in enumerate(clients)]
    held = ties(clients, connects, opened)
    rows = [(CONNECT + 5, "thread/start", 5)]
    return decide.from_evidence(rows, clients, held, CONNECT + 6, CONNECT + 5.5)


def tied(lich: dict[str, str] | None, pid: int = 700) -> tuple[Client, decide.Attribution]:
    """One plain TUI whose window holds connection 5 alone; its thread's card."""
    client = tui(pid, "/p/a", lich)
    client.started = CONNECT - 1
    return client, judged([client], {5: (CONNECT - 0.5, CONNECT - 0.4, decide.STARTUP)})


def test_a_lich_card_s_client_leaves_the_card_to_the_log() -> None:
    assert decide.gate([tui(700, "/p/a", card("card-A")), tui(701, "/p/b", {})]) is None


def test_no_lich_client_refuses_at_once() -> None:
    assert decide.gate([]).decision == decide.NO_CLIENT  # type: ignore[union-attr]
    found = decide.gate([tui(701, "/p/a", {})])
    assert found is not None and found.decision == decide.NOT_IN_LICH
    found = decide.gate([tui(701, "/p/a", {}), tui(702, "/p/a", None)])  # unreadable: no card
    assert found is not None and found.decision == decide.NOT_IN_LICH


def test_a_connection_no_client_accounts_for_names_no_card() -> None:
    """A peer held by another program, another user's or an unreadable process: any
    conversation may be its own, so not even a card whose TUI the log ties is named."""
    found = decide.gate([tui(702, "/p/b", card("card-B"))], unaccounted=1)
    assert found is not None and (found.decision, found.lich) == (decide.UNACCOUNTED, None)


def test_the_tied_tui_names_its_card() -> None:
    _, found = tied(card("card-A"))
    assert (found.decision, found.lich, found.client) == (decide.FOUND, card("card-A"), 700)


@pytest.mark.parametrize("port", ["abc", "0", "70000", "80; x", "", " 4711", "+80", "٣٣"])
def test_invalid_port_in_the_tied_client_s_env_refuses(port: str) -> None:
    _, found = tied(card("card-A", port=port))
    assert (found.decision, found.lich) == (decide.INVALID, None)
    assert "LICH_PORT" in found.why


def test_missing_token_or_card_refuses_and_never_logs_the_token() -> None:
    _, found = tied({"LICH_SESSION_ID": "c", "LICH_PORT": "80"})
    assert (found.decision, found.lich) == (decide.INVALID, None)
    secret = "s3cr3t-token-value"
    _, found = tied({"LICH_TOKEN": secret, "LICH_PORT": "80"})
    assert found.decision == decide.INVALID and "LICH_SESSION_ID" in found.why
    assert secret not in found.why


def test_an_untied_refusal_says_the_window_s_cause() -> None:
    """The person's line and doctor say why: here each window holds both connections, and
    both sent a startup request."""
    a = tui(700, "/p/a", card("card-A"))
    b = tui(701, "/p/b", card("card-B"))
    a.started = b.started = CONNECT - 1
    opened = {c: (CONNECT - 0.5 + c / 100, CONNECT - 0.4, decide.STARTUP) for c in (5, 8)}
    found = judged([a, b], opened)
    assert (found.decision, found.cause) == (decide.UNTIED, decide.TOGETHER), found


def test_beside_others_a_tui_is_told_by_its_own_first_request() -> None:
    """lich restoring cards A and B at once (`codex resume <id>` each), and a plain TUI beside
    them: each window holds all three connections, each TUI's is the one whose first thread
    request is of its kind; a fork has none, and is told apart only when alone."""
    s2 = "01a22c98-20ca-7d42-901e-335193cd8a05"
    a = tui(700, "/p/a", card("card-A"), "resume", S1)
    b = tui(701, "/p/b", card("card-B"), "resume", s2)
    c = tui(702, "/p/c", card("card-C"))
    for client in (a, b, c):
        client.started = CONNECT - 1
    opened = {5: (CONNECT - 0.5, CONNECT - 0.4, S1), 8: (CONNECT - 0.4, CONNECT - 0.3, s2)}
    opened[11] = (CONNECT - 0.3, CONNECT - 0.2, decide.STARTUP)
    connects = [(CONNECT, 700), (CONNECT + 0.1, 701), (CONNECT + 0.2, 702)]
    assert ties([a, b, c], connects, opened) == {700: 5, 701: 8, 702: 11}
    fork = tui(703, "/p/d", card("card-D"), "fork", S1)
    fork.started = CONNECT - 1
    connects.append((CONNECT + 0.3, 703))
    assert ties([fork], connects, opened) == {703: decide.TOGETHER}
    alone = {14: (CONNECT + 0.25, CONNECT + 0.26, "")}
    assert ties([fork], connects, alone) == {703: 14}


def test_switcher_reads_the_subcommand_and_its_session() -> None:
    assert decide.switcher([CODEX, "resume", S1]) == ("resume", S1)
    assert decide.switcher([CODEX, "fork", S1, "go on"]) == ("fork", S1)
    assert decide.switcher([CODEX, "resume", "--last", S1]) == ("resume", None)
    assert decide.switcher([CODEX, "resume", "my-session-name"]) == ("resume", None)
    assert decide.switcher([CODEX, "agents"]) == ("agents", None)
    assert decide.switcher([CODEX, "fix the resume bug"]) is None
    assert decide.switcher([CODEX, "--", "resume"]) is None
    assert decide.switcher([CODEX]) is None


# --- the `ps` fallback (macOS): parsed, then judged the same way -------------------------

PS_OUT = """\
    1     0 /sbin/launchd
  500     1 /Applications/iTerm.app/Contents/MacOS/iTerm2
  700   500 /opt/homebrew/bin/codex
  800     1 /Users/u/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex app-server \
--listen unix:// --managed-daemon
  850   800 /bin/zsh -lc lich-hook SessionStart codex
  860   850 /usr/bin/python3 /Users/u/.local/bin/lich-hook SessionStart codex
  900   700 /bin/zsh -lc lich-hook SessionStart codex
"""


def test_ps_output_finds_the_daemon_above_the_hook() -> None:
    from lich_hooks.hook.shared import proc

    def parse_ps(out: str, start: int) -> list[tuple[int, list[str]]] | None:
        return proc.parse_ps(out, start, decide.is_codex)

    chain = parse_ps(PS_OUT, 850)
    assert chain is not None and [pid for pid, _ in chain] == [850, 800]
    assert runner(chain).kind == decide.DAEMON
    assert runner(parse_ps(PS_OUT, 900)).kind == decide.OWN  # a --no-daemon TUI's child
    assert parse_ps(PS_OUT, 4242) is None  # not in the table: cannot tell
    assert runner(parse_ps(PS_OUT, 4242)).kind == decide.UNKNOWN


def test_without_proc_the_daemon_s_clients_cannot_be_named(tmp_path: Path) -> None:
    """macOS: the daemon is seen (through ps) but its clients are not: refuse."""
    from lich_hooks.hook.shared import codex as codex_daemon

    found = codex_daemon.find_card(800, proc=str(tmp_path))
    assert found is not None and (found.decision, found.lich) == (codex_daemon.UNSUPPORTED, None)
    assert "codex --no-daemon" in found.why


def fake_proc(root: Path, table: dict[int, tuple[int, list[str]]]) -> str:
    """A /proc with `cmdline` and `stat` for each pid: pid -> (ppid, argv)."""
    for pid, (ppid, argv) in table.items():
        folder = root / str(pid)
        folder.mkdir(parents=True)
        (folder / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (folder / "stat").write_text(f"{pid} (a b) c) S {ppid} {pid} {pid} 0 -1\n")
    return str(root)


def test_ancestors_stop_at_the_nearest_codex(tmp_path: Path) -> None:
    from lich_hooks.hook.shared.proc import ancestors

    proc = fake_proc(
        tmp_path,
        {
            100: (90, ["/usr/bin/python3", "/x/lich-hook", "SessionStart", "codex"]),
            90: (80, SH),
            80: (70, DAEMON_ARGV),
            70: (1, [CODEX]),
            1: (0, ["/sbin/init"]),
        },
    )
    chain = ancestors(90, proc, decide.is_codex)
    assert chain is not None
    assert [pid for pid, _ in chain] == [90, 80]
    assert runner(chain).kind == decide.DAEMON


def test_codex_as_pid_1_is_seen(tmp_path: Path) -> None:
    """`docker run … codex exec`: the harness is PID 1 and runs the hook as its child."""
    from lich_hooks.hook.shared.proc import ancestors

    proc = fake_proc(tmp_path, {90: (1, SH), 1: (0, [CODEX, "exec", "hi"])})
    chain = ancestors(90, proc, decide.is_codex)
    assert chain is not None
    assert [pid for pid, _ in chain] == [90, 1]
    assert runner(chain).kind == decide.OWN
    assert "codex process 1" in runner(chain).why


def test_a_daemon_as_pid_1_is_seen(tmp_path: Path) -> None:
    from lich_hooks.hook.shared.proc import ancestors

    proc = fake_proc(tmp_path, {90: (1, SH), 1: (0, DAEMON_ARGV)})
    assert runner(ancestors(90, proc, decide.is_codex)).kind == decide.DAEMON


def test_a_window_beside_a_connection_that_never_asks_a_thread_is_told_together() -> None:
    """doctor's `hooks/list` (or `codex agents`) opened in the window and never sends a thread
    request: the window is not tied, and past REQUEST_SPAN the cause said is the other client,
    not a log that has not shown it yet (which would wait forever)."""
    tui = decide.Client(700, ["codex"], "/p/a", card("card-A"))
    tui.started = 100.0
    connects = [(100.5, 700)]
    opened = {4: (100.2, 100.25, decide.STARTUP), 5: (100.3, 100.35, None)}
    early = decide.tie(tui, 105.0, 50.0, connects, opened, float("-inf"), {})
    late = decide.tie(tui, 100.5 + decide.REQUEST_SPAN + 1, 50.0, connects, opened, -1e9, {})
    assert (early, late) == (decide.NOT_YET, decide.TOGETHER)
