"""The attribution rules over recorded process snapshots (no processes, no /proc).

The snapshots are shaped like what probe.py records from a real Codex 0.171.0
daemon: the daemon's argv, the clients' argv, cwd and LICH_* environment.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lich_hooks.hook.shared.codex import decide
from lich_hooks.hook.shared.codex.decide import (
    Attribution,
    Client,
    choose,
    conversation_dir,
    runner,
)

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


def pick(
    clients: list[Client], cwd: str | None, source: str = "startup", recorded: str | None = None
) -> Attribution:
    """choose() for a fresh conversation unless told otherwise (what most SessionStarts are)."""
    return choose(clients, cwd, source, recorded)


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


# --- which card --------------------------------------------------------------------------


def test_one_client_names_its_card() -> None:
    found = pick([tui(700, "/p/a", card("card-A"))], "/p/a")
    assert found.decision == decide.FOUND
    assert found.lich == card("card-A")
    assert found.client == 700


def test_two_clients_in_different_dirs_each_get_their_own_card() -> None:
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/b", card("card-B", "4712", "t2"))]
    assert pick(clients, "/p/a").lich == card("card-A")
    assert pick(clients, "/p/b").lich == card("card-B", "4712", "t2")


def test_two_cards_in_one_dir_refuse() -> None:
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/a", card("card-B"))]
    found = pick(clients, "/p/a")
    assert (found.decision, found.lich) == (decide.SEVERAL, None)
    assert "card-A" in found.why and "card-B" in found.why


def test_two_clients_of_one_card_in_one_dir_name_it() -> None:
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/a", card("card-A"))]
    assert pick(clients, "/p/a").lich == card("card-A")


def test_one_card_seen_through_two_lich_listeners_refuses() -> None:
    """Same card id, different port: which lich holds the card is unknown."""
    clients = [tui(700, "/p/a", card("card-A", "4711")), tui(701, "/p/a", card("card-A", "5000"))]
    assert pick(clients, "/p/a").decision == decide.SEVERAL


def test_client_gone_refuses() -> None:
    assert pick([], "/p/a").decision == decide.NO_CLIENT
    gone = tui(700, None, None)  # exited between the socket scan and the cwd read
    assert pick([gone], "/p/a").decision == decide.NO_CLIENT


def test_no_client_in_this_dir_refuses() -> None:
    found = pick([tui(700, "/p/b", card("card-B"))], "/p/a")
    assert (found.decision, found.lich) == (decide.NO_CLIENT, None)


def test_unreadable_environ_refuses() -> None:
    found = pick([tui(700, "/p/a", None)], "/p/a")
    assert (found.decision, found.lich) == (decide.UNREADABLE, None)


def test_unreadable_environ_of_a_neighbour_in_the_dir_refuses() -> None:
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/a", None)]
    assert pick(clients, "/p/a").decision == decide.UNREADABLE


def test_a_client_outside_lich_in_the_same_dir_refuses() -> None:
    """The conversation may be the plain terminal's: naming card-A could be wrong."""
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/a", {})]
    assert pick(clients, "/p/a").decision == decide.NOT_IN_LICH
    assert pick([tui(701, "/p/a", {})], "/p/a").decision == decide.NOT_IN_LICH


def test_daemon_s_own_env_is_not_an_input() -> None:
    """The daemon carries the first TUI's card (stale for everyone else): choose() never sees it.

    Only the client in the payload's directory counts; tests/codex_daemon/test_fake_daemon.py
    runs the console script under a daemon whose environment names another card.
    """
    found = pick([tui(701, "/p/b", card("card-B"))], "/p/b")
    assert found.lich is not None and found.lich["LICH_SESSION_ID"] == "card-B"


@pytest.mark.parametrize("port", ["abc", "0", "70000", "80; x", "", " 4711", "+80", "٣٣"])
def test_invalid_port_in_client_env_refuses(port: str) -> None:
    found = pick([tui(700, "/p/a", card("card-A", port=port))], "/p/a")
    assert (found.decision, found.lich) == (decide.INVALID, None)
    assert "LICH_PORT" in found.why


def test_missing_token_or_card_refuses_and_never_logs_the_token() -> None:
    found = pick([tui(700, "/p/a", {"LICH_SESSION_ID": "c", "LICH_PORT": "80"})], "/p/a")
    assert (found.decision, found.lich) == (decide.INVALID, None)
    secret = "s3cr3t-token-value"
    found = pick([tui(700, "/p/a", {"LICH_TOKEN": secret, "LICH_PORT": "80"})], "/p/a")
    assert found.decision == decide.INVALID and "LICH_SESSION_ID" in found.why
    assert secret not in found.why


def test_no_absolute_cwd_in_payload_refuses() -> None:
    clients = [tui(700, "/p/a", card("card-A"))]
    for cwd in (None, "", "p/a"):
        assert pick(clients, cwd).decision == decide.NO_CWD


def test_cd_flag_names_the_conversation_dir() -> None:
    moved = tui(700, "/p/a", card("card-A"), "--cd", "/p/b")
    here = tui(701, "/p/a", card("card-B"))
    assert conversation_dir(moved) == "/p/b"
    assert pick([moved, here], "/p/b").lich == card("card-A")
    assert pick([moved, here], "/p/a").lich == card("card-B")
    assert conversation_dir(tui(1, "/p/a", {}, "-C", "sub/../x")) == "/p/a/x"
    assert conversation_dir(tui(1, "/p/a", {}, "-Csub")) == "/p/a/sub"
    assert conversation_dir(tui(1, "/p/a", {}, "--cd=/q")) == "/q"
    assert conversation_dir(tui(1, "/p/a", {}, "--", "-C", "/q")) == "/p/a"


def test_paths_compare_normalised() -> None:
    assert pick([tui(700, "/p/a", card("card-A"))], "/p/./a/").lich == card("card-A")


names = st.sampled_from(["card-A", "card-B", "card-C"])
dirs = st.sampled_from(["/p/a", "/p/b"])
snapshots = st.lists(st.tuples(dirs, names), max_size=6)


@given(snapshots, dirs)
def test_never_a_card_that_is_not_the_only_one_in_the_dir(
    rows: list[tuple[str, str]], cwd: str
) -> None:
    """The rule itself: a report names a card only when every client in cwd belongs to it."""
    clients = [tui(100 + i, d, card(n)) for i, (d, n) in enumerate(rows)]
    found = pick(clients, cwd)
    in_dir = {n for d, n in rows if d == cwd}
    if len(in_dir) == 1:
        assert found.lich == card(in_dir.pop())
    else:
        assert found.lich is None


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
    from lich_hooks.hook.shared.codex.probe import parse_ps

    chain = parse_ps(PS_OUT, 850)
    assert chain is not None and [pid for pid, _ in chain] == [850, 800]
    assert runner(chain).kind == decide.DAEMON
    assert runner(parse_ps(PS_OUT, 900)).kind == decide.OWN  # a --no-daemon TUI's child
    assert parse_ps(PS_OUT, 4242) is None  # not in the table: cannot tell
    assert runner(parse_ps(PS_OUT, 4242)).kind == decide.UNKNOWN


def test_without_proc_the_daemon_s_clients_cannot_be_named(tmp_path: Path) -> None:
    """macOS: the daemon is seen (through ps) but its clients are not: refuse."""
    from lich_hooks.hook.shared import codex as codex_daemon

    found = codex_daemon.find_card(800, "/p/a", proc=str(tmp_path))
    assert (found.decision, found.lich) == (codex_daemon.UNSUPPORTED, None)
    assert "codex --no-daemon" in found.why


# --- conversations that do not run where their TUI runs -----------------------------------

S1 = "01a22c98-20ca-7d42-901e-335193cd8a04"


def test_a_resumed_session_in_its_recorded_dir_may_be_any_client_s() -> None:
    """Card B ran `/resume` on a projA session and chose "session directory" (the default):
    the payload says projA, where card A's TUI works. Measured on Codex 0.171.0."""
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/b", card("card-B"))]
    found = pick(clients, "/p/a", source="resume", recorded="/p/a")
    assert (found.decision, found.lich) == (decide.SEVERAL, None)
    assert pick(clients, "/p/a", source="resume", recorded=None).lich is None  # unknown: same


def test_a_resumed_session_moved_to_the_current_dir_is_that_dir_s_client() -> None:
    """ "Use current directory": the conversation runs where the resuming TUI works."""
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/b", card("card-B"))]
    assert pick(clients, "/p/b", source="resume", recorded="/p/a").lich == card("card-B")


def test_a_resumed_session_with_a_single_card_connected_is_that_card_s() -> None:
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/b", card("card-A"))]
    assert pick(clients, "/p/a", source="resume", recorded="/p/a").lich == card("card-A")


@pytest.mark.parametrize("source", ["fork", "compact", "something-new", ""])
def test_unknown_and_fork_sources_are_treated_like_resume(source: str) -> None:
    clients = [tui(700, "/p/a", card("card-A")), tui(701, "/p/b", card("card-B"))]
    assert pick(clients, "/p/a", source=source, recorded="/p/a").lich is None


def test_codex_resume_by_id_can_be_in_its_dir_or_the_session_s() -> None:
    resumed = tui(701, "/p/b", card("card-B"), "resume", S1)
    resumed.resumed_dir = "/p/a"
    a = tui(700, "/p/a", card("card-A"))
    c = tui(702, "/p/c", card("card-C"))
    assert decide.possible_dirs(resumed) == {"/p/a", "/p/b"}
    assert pick([a, resumed, c], "/p/a").decision == decide.SEVERAL  # A, or B moved there
    assert pick([a, resumed, c], "/p/b").lich == card("card-B")
    assert pick([a, resumed, c], "/p/c").lich == card("card-C")  # B cannot be there


def test_codex_resume_in_its_own_recorded_dir_stays_there() -> None:
    resumed = tui(701, "/p/b", card("card-B"), "resume", S1)
    resumed.resumed_dir = "/p/b"
    a = tui(700, "/p/a", card("card-A"))
    assert pick([a, resumed], "/p/a").lich == card("card-A")
    assert pick([a, resumed], "/p/b").lich == card("card-B")


@pytest.mark.parametrize(
    "args",
    [
        ("resume",),
        ("resume", "--last"),
        ("resume", "my-session-name"),
        ("fork", "--last"),
        ("agents",),
        ("-m", "o3", "resume", "--all"),
        ("resume", S1),  # the id's session was not found: its directory is unknown
    ],
)
def test_a_tui_that_can_switch_anywhere_competes_everywhere(args: tuple[str, ...]) -> None:
    anywhere = tui(701, "/p/b", card("card-B"), *args)
    a = tui(700, "/p/a", card("card-A"))
    assert decide.possible_dirs(anywhere) is None
    assert pick([a, anywhere], "/p/a").decision == decide.SEVERAL
    assert pick([a, anywhere], "/p/b").lich == card("card-B")


def test_switcher_reads_the_subcommand_and_its_session() -> None:
    assert decide.switcher([CODEX, "resume", S1]) == ("resume", S1)
    assert decide.switcher([CODEX, "fork", S1, "go on"]) == ("fork", S1)
    assert decide.switcher([CODEX, "resume", "--last", S1]) == ("resume", None)
    assert decide.switcher([CODEX, "agents"]) == ("agents", None)
    assert decide.switcher([CODEX, "fix the resume bug"]) is None
    assert decide.switcher([CODEX, "--", "resume"]) is None
    assert decide.switcher([CODEX]) is None


def fake_proc(root: Path, table: dict[int, tuple[int, list[str]]]) -> str:
    """A /proc with `cmdline` and `stat` for each pid: pid -> (ppid, argv)."""
    for pid, (ppid, argv) in table.items():
        folder = root / str(pid)
        folder.mkdir(parents=True)
        (folder / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (folder / "stat").write_text(f"{pid} (a b) c) S {ppid} {pid} {pid} 0 -1\n")
    return str(root)


def test_ancestors_stop_at_the_nearest_codex(tmp_path: Path) -> None:
    from lich_hooks.hook.shared.codex.probe import ancestors

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
    chain = ancestors(90, proc)
    assert chain is not None
    assert [pid for pid, _ in chain] == [90, 80]
    assert runner(chain).kind == decide.DAEMON


def test_codex_as_pid_1_is_seen(tmp_path: Path) -> None:
    """`docker run … codex exec`: the harness is PID 1 and runs the hook as its child."""
    from lich_hooks.hook.shared.codex.probe import ancestors

    proc = fake_proc(tmp_path, {90: (1, SH), 1: (0, [CODEX, "exec", "hi"])})
    chain = ancestors(90, proc)
    assert chain is not None
    assert [pid for pid, _ in chain] == [90, 1]
    assert runner(chain).kind == decide.OWN
    assert "codex process 1" in runner(chain).why


def test_a_daemon_as_pid_1_is_seen(tmp_path: Path) -> None:
    from lich_hooks.hook.shared.codex.probe import ancestors

    proc = fake_proc(tmp_path, {90: (1, SH), 1: (0, DAEMON_ARGV)})
    assert runner(ancestors(90, proc)).kind == decide.DAEMON


# --- a TUI that moved without a trace: /resume into another card's directory, then /new ------

# Recorded from Codex 0.171.0 (tests/real_clients/test_codex_daemon.py): card A's plain TUI in
# projA resumed S1, recorded in projB, chose "session directory" and started a new conversation;
# SessionStart came only for that one, fresh, cwd projB. The daemon held S1's rollout open.
MOVED_A = tui(700, "/p/a", card("card-A"))
HOME_B = tui(701, "/p/b", card("card-B", "4712", "t2"))


def test_the_moved_tui_s_new_conversation_names_no_card() -> None:
    clients = [MOVED_A, HOME_B]
    found = pick(clients, "/p/b")  # what choose alone sees: card B, wrongly
    assert found.lich == card("card-B", "4712", "t2")
    found = decide.attribute(clients, "/p/b", "startup")
    assert (found.decision, found.lich) == (decide.MOVED, None)
    assert "card-A" in found.why and "card-B" in found.why
    # and card A's own directory alike: card B's TUI may have moved there as well
    assert decide.attribute(clients, "/p/a", "startup").decision == decide.MOVED


def test_a_mover_of_the_same_card_still_names_it() -> None:
    """Two TUIs of one card: whichever moved, the conversation is that card's."""
    clients = [tui(700, "/p/a", card("card-B", "4712", "t2")), HOME_B]
    assert decide.attribute(clients, "/p/b", "startup").lich == card("card-B", "4712", "t2")


def test_a_directory_nobody_works_in_names_no_card() -> None:
    found = decide.attribute([tui(700, "/p/a", card("card-A"))], "/p/c", "startup")
    assert found.decision == decide.NO_CLIENT


def test_a_connection_no_client_accounts_for_names_no_card() -> None:
    """A peer held by another program, another user's or an unreadable process: any
    conversation may be its own, so not even the one card whose TUI works here is named."""
    clients = [tui(702, "/p/b", card("card-B"))]
    assert decide.attribute(clients, "/p/b", "startup").lich == card("card-B")
    found = decide.attribute(clients, "/p/b", "startup", None, 1)
    assert (found.decision, found.lich) == (decide.UNACCOUNTED, None)


@given(snapshots, dirs)
def test_never_a_card_unless_it_is_the_only_one_connected(
    rows: list[tuple[str, str]], cwd: str
) -> None:
    """The rule: a client able to run in cwd, and every connected client of one card."""
    clients = [tui(100 + i, d, card(n)) for i, (d, n) in enumerate(rows)]
    found = decide.attribute(clients, cwd, "startup")
    cards = {n for _, n in rows}
    if len(cards) == 1 and any(d == cwd for d, _ in rows):
        assert found.lich == card(cards.pop())
    else:
        assert found.lich is None
