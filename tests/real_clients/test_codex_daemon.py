"""Two lich cards running the interactive Codex TUI share one app-server daemon.

Since 0.157 the TUI runs every hook inside one background
`codex app-server --listen unix:// --managed-daemon` per CODEX_HOME, carrying
the environment of the TUI that started it. These tests start real TUIs on
pseudo-terminals, each a card with its own LICH_SESSION_ID and its own lich
listener (port and token), type a prompt into each, and check which card each
SessionStart report names: its own (the daemon's log ties the thread's
connection to that card's TUI), or none. Never the other card. On 0.156 (the matrix's
oldest Codex) the same tests show the TUI running its hooks as its own children:
no daemon, and every card reports its own, even two in one directory.

One CODEX_HOME serves the whole module: the first TUI copies ~424 MB of Codex
into CODEX_HOME/packages/ for the daemon. The daemon and its updater loop are
stopped at the end (support/codex.py: stop_daemon).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.real_clients.support.claude import Terminal, wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.codex import (
    codex_env,
    running_for,
    seed_codex_home,
    stop_daemon,
)
from tests.real_clients.support.model_api import ModelAPI
from tests.support.runner import log_records

pytestmark = [
    pytest.mark.real_client,
    pytest.mark.skipif(sys.platform != "linux", reason="daemon attribution reads /proc"),
]

READY = "Ask Codex"  # the composer's placeholder: the TUI takes input
DAEMON_SINCE = "0.157.0"  # the first Codex whose TUI hands its hooks to the shared daemon
TURN_DONE = "Worked for"  # the line under a turn's last output
# what the daemon's log could not prove (docs/harnesses.md, Codex): nothing sent
UNPROVEN = ("codex-daemon-untied", "codex-daemon-no-evidence", "codex-daemon-thread-shared")


class Lab:
    """One CODEX_HOME, its trusted project dirs, and the environment every card shares."""

    def __init__(self, root: Path, client: Client, api: ModelAPI) -> None:
        self.root = root
        self.client = client
        self.daemon = client.at_least(DAEMON_SINCE)
        self.codex_home = root / "codex-home"
        self.dirs = {
            name: root / name
            for name in ("projA", "projB", "projC", "projD", "projE", "projF", "projG", "projQ")
        }
        for folder in self.dirs.values():
            folder.mkdir()
        seed_codex_home(self.codex_home, api.base_url, projects=self.dirs.values())
        # the daemon's LICH_HOOK_LOG is whichever card started it: one log for all cards
        self.base = codex_env(root, self.codex_home, TERM="xterm-256color", SHELL="/bin/sh")

    def card_env(self, card: str, lich: StandIn) -> dict[str, str]:
        return {**self.base, **lich.env(card)}

    def records(self) -> list[dict[str, object]]:
        return [r for r in log_records(self.base) if r.get("event") == "SessionStart"]

    def daemons(self) -> list[str]:
        return [line for _, line in running_for(self.codex_home) if "--managed-daemon" in line]

    def holds(self, session: str, settle: float = 5.0) -> bool:
        """Does the daemon hold `session`'s rollout open, once `settle` seconds have let it
        unload? (Read here from /proc: the hook reads no rollout.)"""
        deadline = time.monotonic() + settle
        while True:
            held = any(
                target.endswith(f"-{session}.jsonl")
                for pid, line in running_for(self.codex_home)
                if "--managed-daemon" in line
                for target in _open_files(pid)
            )
            if not held or time.monotonic() > deadline:
                return held
            time.sleep(0.2)

    def wait_connected(self, *tuis: Terminal, timeout: float = 60.0) -> None:
        """Until the daemon lists every one of these TUIs among its clients.

        A TUI draws its composer before it has connected to the daemon: a turn
        typed then waits, and a hook run meanwhile sees the TUIs connected so far.
        """
        from lich_hooks.hook.shared.codex import probe

        if not self.daemon:
            return  # before 0.157 each TUI runs its own hooks: nothing to join
        want = {tui.proc.pid for tui in tuis}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pid, line in running_for(self.codex_home):
                if "--managed-daemon" in line:
                    try:
                        if want <= {c.pid for c in probe.snapshot(pid)[0]}:
                            return
                    except probe.ProbeError:
                        pass
            time.sleep(0.2)
        raise AssertionError(f"TUIs {sorted(want)} never connected to the daemon")


def _open_files(pid: int) -> list[str]:
    folder = Path(f"/proc/{pid}/fd")
    found = []
    for fd in folder.iterdir() if folder.is_dir() else []:
        try:
            found.append(os.readlink(fd))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def lab(codex: Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with ModelAPI() as api:
        lab = Lab(tmp_path_factory.mktemp("codex-daemon"), codex, api)
        try:
            yield lab
        finally:
            stop_daemon(codex, lab.base)
            assert running_for(lab.codex_home) == [], "the daemon outlived its teardown"


def start(stack: ExitStack, lab: Lab, env: dict[str, str], cwd: Path, *args: str) -> Terminal:
    tui = stack.enter_context(Terminal(lab.client, env, cwd, args=args))
    tui.wait_for_text(READY, timeout=120)
    return tui


def daemon_up(lab: Lab) -> None:
    """`codex app-server daemon start`: the daemon's first start copies ~424 MB into
    CODEX_HOME, and a TUI that waits for that logs its connect too late to be tied."""
    if not lab.daemon:
        return
    subprocess.run(
        [str(lab.client.binary), "app-server", "daemon", "start"],
        env=lab.base,
        capture_output=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def settled(tui: Terminal) -> None:
    """Until 5 s after the TUI started (it connects within 1.6 s, the daemon up): a plain TUI
    is tied to its connection only when no other plain TUI's opens in its window, its start to
    its connect (decide.tie), so a test that wants each card named starts the next later."""
    from lich_hooks.hook.shared.codex.probe import started_at

    began = started_at(tui.proc.pid)
    assert began is not None
    time.sleep(max(0.0, began + 5.0 - time.time()))


def accepted(lich: StandIn) -> list[dict[str, object]]:
    return [r.accepted for r in lich.received if r.accepted is not None]


def test_two_cards_in_different_dirs_each_report_their_own_or_none(lab: Lab) -> None:
    """Card A alone on the daemon reports its own; card B's TUI joins in another directory
    and prompts at once: its conversation goes to card B or, when its tie is not proven yet,
    nowhere; never to card A (the old bug: card B's conversation on card A, whose
    environment the daemon carries). Before the daemon (0.156) each TUI runs its own hook.
    """
    before = len(lab.records())
    daemon_up(lab)
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        card_a = start(stack, lab, lab.card_env("card-A", lich_a), lab.dirs["projA"])
        settled(card_a)  # a first prompt at once into a fresh daemon may find its log silent
        card_a.submit("hello from card A")
        [got_a] = lich_a.wait(1, timeout=60)
        assert bool(lab.daemons()) is lab.daemon, "a daemon only from 0.157"
        assert got_a.accepted is not None and got_a.accepted["session_id"] == "card-A"
        assert got_a.status == 204

        card_b = start(stack, lab, lab.card_env("card-B", lich_b), lab.dirs["projB"])
        lab.wait_connected(card_a, card_b)
        card_b.submit("hello from card B")
        records = _wait_records(lab, before + 2)[before:]
        assert all(("app-server" in str(r.get("codex_runner"))) is lab.daemon for r in records)
        if lab.daemon:
            assert records[0]["decision"] == "report", records
            assert records[1]["decision"] in ("report", *UNPROVEN), records
            named = [a["session_id"] for a in accepted(lich_b)]
            assert named == (["card-B"] if records[1]["decision"] == "report" else [])
        else:
            assert [r["decision"] for r in records] == ["report", "report"]
            [got_b] = lich_b.wait(1, timeout=60)
            assert got_b.accepted is not None and got_b.accepted["session_id"] == "card-B"
        assert [a["session_id"] for a in accepted(lich_a)] == ["card-A"]
        print(f"attribution: {[(r.get('attribution'), r.get('attribution_ms')) for r in records]}")


def test_a_card_whose_first_turn_fails_at_once_is_reported(lab: Lab) -> None:
    """A quiet daemon: card A alone, its first prompt typed as soon as the composer shows
    (before its TUI has connected, so it goes in as the TUI connects, as when lich opens a
    card with its task) and the provider failing at once (HTTP 500). The daemon logs the
    turn and then nothing. The sender waited 15 s for a daemon row past the TUI's connect
    + 1 s and refused (`codex-daemon-untied`): card A's first conversation went unreported.
    Now the sender makes the daemon log a request of its own past that moment (evidence.py,
    settle): reported on card A."""
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    stop_daemon(lab.client, lab.base)  # a daemon no earlier test's TUI keeps writing
    daemon_up(lab)
    with StandIn() as lich_a, ExitStack() as stack:
        before = len(lab.records())
        card_a = start(stack, lab, lab.card_env("card-A", lich_a), lab.dirs["projQ"])
        card_a.submit("failing at once [[status:500]]")
        [record] = _wait_records(lab, before + 1)[before:]
        assert record["decision"] == "report", record
        assert record.get("codex_requests") == 1 and "codex_request_failed" not in record, record
        assert [a["session_id"] for a in accepted(lich_a)] == ["card-A"]
        print(f"\nquiet daemon: {record['attribution']} ({record.get('decide_ms')} ms)")


def test_two_cards_in_one_dir_never_name_the_wrong_card(lab: Lab) -> None:
    """Cards C and D in one folder, D started as soon as C's composer shows (C may not have
    connected yet): each conversation goes to its own card or, where both windows hold both
    connections, to none; never to the other card."""
    before = len(lab.records())
    with StandIn() as lich_c, StandIn() as lich_d, ExitStack() as stack:
        here = lab.dirs["projC"]
        card_c = start(stack, lab, lab.card_env("card-C", lich_c), here)
        card_d = start(stack, lab, lab.card_env("card-D", lich_d), here)
        lab.wait_connected(card_c, card_d)
        card_d.submit("hello from card D")
        card_c.submit("hello from card C")
        records = _wait_records(lab, before + 2)[before:]
        decisions = [str(r["decision"]) for r in records]
        assert all(d in ("report", *UNPROVEN) for d in decisions), records
        assert decisions == ["report", "report"] or lab.daemon, records  # 0.156: its own hooks
        reported, deadline = decisions.count("report"), time.monotonic() + 60
        while len(accepted(lich_c)) + len(accepted(lich_d)) < reported:
            assert time.monotonic() < deadline, (records, lich_c.received, lich_d.received)
            time.sleep(0.1)
        assert [a["session_id"] for a in accepted(lich_c)] in ([], ["card-C"])
        assert [a["session_id"] for a in accepted(lich_d)] in ([], ["card-D"])
        assert len(accepted(lich_c)) + len(accepted(lich_d)) == reported
        print(f"\nsame dir: {[(r['decision'], r.get('attribution')) for r in records]}")


def test_a_session_resumed_into_another_card_s_dir_names_no_card(lab: Lab) -> None:
    """Card B resumes a session recorded in projA, where card A works, in its directory.

    Codex asks "session directory or current directory?" (session directory is
    the default); `tui.resume_cwd` answers it up front. The conversation then
    runs in projA and nothing in the payload says it is card B's: on the code
    before this check, card A's TUI was the one client there and got the report.
    """
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        env_a = lab.card_env("card-A", lich_a)
        # a session recorded in projA that the daemon does not hold (one a daemon TUI ran stays
        # loaded there, and another TUI resuming it is told it is open elsewhere)
        first = start(stack, lab, env_a, lab.dirs["projA"], "--no-daemon")
        first.submit("hello from card A")
        [got] = lich_a.wait(1, timeout=60)
        first.close()
        assert got.accepted is not None and got.accepted["session_id"] == "card-A"
        session = str(got.accepted["provider_session_id"])
        start(stack, lab, env_a, lab.dirs["projA"])  # card A works on in projA
        before = len(lab.records())
        _answer_session_directory(lab, stack)
        env_b = lab.card_env("card-B", lich_b)
        card_b = start(stack, lab, env_b, lab.dirs["projB"], "resume", session)
        # The resumed session is up once its composer shows after "Resuming session". (Its
        # old transcript is redrawn in pieces, so the first prompt's text is no reliable sign.)
        resumed = card_b.wait_for_text("Resuming session", timeout=60)
        card_b.wait_for_text("Ask Codex to do anything", timeout=60, after=resumed)
        card_b.submit("hello from card B")
        for _ in range(3):
            # A resumed TUI can take the Enter that follows fast typing as part of a paste
            # (the prompt stays in its composer): press it again until the turn starts.
            if len(_wait_records(lab, before + 1, timeout=15)) > before:
                break
            card_b.press_enter()
        records = _wait_records(lab, before + 1)[before:]
        assert len(records) == 1, (records, card_b.screen()[-1500:])
        [record] = records
        if not lab.daemon:  # card B's TUI ran the hook itself: card B's report, rightly
            assert record["decision"] == "report", record
            [got_b] = lich_b.wait(1, timeout=60)
            assert got_b.accepted is not None and got_b.accepted["session_id"] == "card-B"
            assert got_b.accepted["provider_session_id"] == session
            assert len(lich_a.received) == 1
            return
        assert "app-server" in str(record.get("codex_runner")), record  # the daemon ran it
        # `codex resume <id>` names its thread on its own command line, and the daemon's log names
        # the one connection that resumed it: card B's, never card A's (or none, unproven)
        assert record["decision"] in ("report", *UNPROVEN), record
        if record["decision"] == "report":
            [got_b] = lich_b.wait(1, timeout=60)
            assert got_b.accepted is not None and got_b.accepted["session_id"] == "card-B"
            assert got_b.accepted["provider_session_id"] == session
        else:
            assert lich_b.received == []
        assert len(lich_a.received) == 1
        print(f"\nresumed into card A's dir: {record['decision']} {record.get('attribution')}")


@pytest.mark.slow
def test_a_tui_moved_by_resume_then_new_is_named_by_its_connection(lab: Lab) -> None:
    """Card F's plain TUI `/resume`s a session recorded in projG, where card G works, and
    `/new`s: Codex fires SessionStart only for the new conversation, in projG.

    Nothing in card F's process says it now works in projG (on the code before
    the every-TUI rule card G, the one client there, got it; under that rule
    nothing was sent while both were connected). The daemon's log names F's
    connection on the new thread, so card F gets it; card G's own `/new` there
    is card G's, with card F's TUI still connected.
    """
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    here, there = lab.dirs["projF"], lab.dirs["projG"]
    with StandIn() as lich_f, StandIn() as lich_g, ExitStack() as stack:
        env_f, env_g = lab.card_env("card-F", lich_f), lab.card_env("card-G", lich_g)
        seed = start(stack, lab, env_g, there, "--no-daemon")  # a session recorded in projG
        seed.submit("seed session of card G")
        lich_g.wait(1, timeout=60)
        seed.wait_for_text("scripted reply", timeout=60)  # recorded with its first turn
        seed.close()
        _answer_session_directory(lab, stack)
        daemon_up(lab)
        card_g = start(stack, lab, env_g, there)
        settled(card_g)
        card_f = start(stack, lab, env_f, here)
        lab.wait_connected(card_g, card_f)
        settled(card_f)
        before = len(lab.records())
        turns = len(card_g.screen()), len(card_f.screen())
        card_g.submit("hello from card G")
        _wait_records(lab, before + 1)
        card_f.submit("hello from card F")
        records = _wait_records(lab, before + 2)[before:]
        # two cards connected, each tied to its connection: each reports its own
        assert [r["decision"] for r in records] == ["report"] * 2, records
        assert [a["session_id"] for a in accepted(lich_f)] == ["card-F"]
        assert [a["session_id"] for a in accepted(lich_g)] == ["card-G"] * 2  # and the seed's

        # a turn in progress disables /resume (and /new): wait until each has ended
        card_g.wait_for_text(TURN_DONE, after=turns[0])
        card_f.wait_for_text(TURN_DONE, after=turns[1])
        mark = len(card_f.screen())
        card_f.type("/resume")
        card_f.wait_for_text("/resume", after=mark)
        card_f.press_enter()
        listed = card_f.wait_for_text("Resume a previous session", after=mark)
        card_f.type("\x1b[C")  # the filter: this directory's sessions -> all
        # the picker reloads for the new filter and drops keys typed meanwhile: type the
        # search only once card G's session is listed
        loaded = card_f.wait_for_text("seed session of card G", after=listed)
        _search(card_f, "seed session of card G", after=loaded)
        card_f.press_enter()
        resumed = card_f.wait_for_text(str(there), after=listed)  # its status line: projG
        card_f.wait_for_text(READY, after=resumed)
        _slash_new(card_f)
        _submit_until_hooked(lab, card_f, "hello from card F in projG", before + 3)
        [moved] = _wait_records(lab, before + 3)[before + 2 :]
        assert "app-server" in str(moved.get("codex_runner")), moved
        assert moved["decision"] == "report", moved
        assert [a["session_id"] for a in accepted(lich_f)] == ["card-F"] * 2
        # card G's own new conversation there, card F's TUI still connected: card G's
        _slash_new(card_g)
        _submit_until_hooked(lab, card_g, "hello again from card G", before + 4)
        [again] = _wait_records(lab, before + 4)[before + 3 :]
        assert again["decision"] == "report", again
        assert [a["session_id"] for a in accepted(lich_g)] == ["card-G"] * 3
        assert [a["session_id"] for a in accepted(lich_f)] == ["card-F"] * 2
        print(f"\nmoved by /resume + /new: {moved['attribution']}\nG again: {again}")


@pytest.mark.parametrize("unload", [False, True], ids=["held", "unloaded"])
def test_another_card_s_reported_session_resumed_then_new_is_never_that_card_s(
    lab: Lab, unload: bool
) -> None:
    """The issue's two sequences: card B, alone on the daemon, reports S1 in its directory
    and `/new`s; card A's plain TUI `/resume`s S1 ("session directory") and `/new`s.

    held: the daemon keeps S1 loaded, so A's resume changes nothing the probe sees
    and the state is the one of card B's own `/new`. unloaded: with
    `thread_unload_delay_secs = 0` the daemon lets go of S1 whenever no TUI shows
    it (after B's `/new`, and again after A's), so the attribution of S1 outlives
    its unload and nothing shows A's move at all. On the code before, card A's
    conversation went to card B in both. Now the daemon's log names card A's connection:
    card A's, or nothing while its tie is not proven.
    """
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    here, there = (
        (lab.dirs["projA"], lab.dirs["projB"]) if unload else (lab.dirs["projD"], lab.dirs["projE"])
    )
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        _answer_session_directory(lab, stack)
        if unload:
            _unload_at_once(lab, stack)
        daemon_up(lab)
        card_b = start(stack, lab, lab.card_env("card-B", lich_b), there)
        settled(card_b)
        before = len(lab.records())
        mark = len(card_b.screen())
        card_b.submit(f"first of card B in {there.name}")
        [got] = lich_b.wait(1, timeout=60)
        assert got.accepted is not None and got.accepted["session_id"] == "card-B"
        card_b.wait_for_text(TURN_DONE, after=mark)
        _slash_new(card_b)  # no TUI shows S1 now
        s1 = str(got.accepted["provider_session_id"])
        # what the model assumes: held while idle by default, let go at once with the delay 0
        assert lab.holds(s1) is not unload
        card_a = start(stack, lab, lab.card_env("card-A", lich_a), here)
        lab.wait_connected(card_a, card_b)
        mark = len(card_a.screen())
        card_a.type("/resume")
        card_a.wait_for_text("/resume", after=mark)
        card_a.press_enter()
        listed = card_a.wait_for_text("Resume a previous session", after=mark)
        card_a.type("\x1b[C")  # the filter: this directory's sessions -> all
        loaded = card_a.wait_for_text(f"first of card B in {there.name}", after=listed, drawn=True)
        _search(card_a, f"first of card B in {there.name}", after=loaded)
        card_a.press_enter()
        resumed = card_a.wait_for_text(str(there), after=listed)  # its status line
        card_a.wait_for_text(READY, after=resumed)
        _slash_new(card_a)
        _submit_until_hooked(lab, card_a, f"card A's own, in {there.name}", before + 2)
        [moved] = _wait_records(lab, before + 2)[before + 1 :]
        assert moved["decision"] in ("report", *UNPROVEN), moved
        assert [a["session_id"] for a in accepted(lich_b)] == ["card-B"]  # nothing more
        named = ["card-A"] if moved["decision"] == "report" else []
        assert [a["session_id"] for a in accepted(lich_a)] == named
        print(f"\nresumed S1 then /new: {moved['attribution']}")


@pytest.mark.slow
def test_with_another_card_connected_a_card_s_new_conversation_is_its_own(lab: Lab) -> None:
    """Card B's TUI connected, card A `/new`s and prompts: reported on card A (the every-TUI
    rule sent nothing here); card B's conversation on card B or not at all."""
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    daemon_up(lab)
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        card_a = start(stack, lab, lab.card_env("card-A", lich_a), lab.dirs["projA"])
        settled(card_a)
        card_b = start(stack, lab, lab.card_env("card-B", lich_b), lab.dirs["projB"])
        lab.wait_connected(card_a, card_b)
        settled(card_b)
        before = len(lab.records())
        _submit_until_hooked(lab, card_b, "hello from card B", before + 1)
        _slash_new(card_a)
        _submit_until_hooked(lab, card_a, "card A after /new", before + 2)
        b, a = _wait_records(lab, before + 2)[before:]
        assert a["decision"] == "report", a
        assert [x["session_id"] for x in accepted(lich_a)] == ["card-A"]
        assert b["decision"] in ("report", *UNPROVEN), b
        assert [x["session_id"] for x in accepted(lich_b)] == (
            ["card-B"] if b["decision"] == "report" else []
        )
        print(f"\nA: {a['attribution']} ({a['decide_ms']} ms)\nB: {b['attribution']}")


@pytest.mark.slow
def test_a_client_that_left_before_the_hook_names_no_card(lab: Lab) -> None:
    """`codex queue --resume` resumes card A's thread (unloaded), runs its turn and leaves
    before the hook runs: card A's TUI is the only client then, and the code before this
    named card A. The daemon's log names the queue's connection too: no card."""
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    with StandIn() as lich_a, ExitStack() as stack:
        _unload_at_once(lab, stack, delay=2)  # 0: the queue's thread may unload before its turn
        daemon_up(lab)
        env_a = lab.card_env("card-A", lich_a)
        card_a = start(stack, lab, env_a, lab.dirs["projA"])
        settled(card_a)
        before = len(lab.records())
        mark = len(card_a.screen())
        _submit_until_hooked(lab, card_a, "card A's thread", before + 1)
        [got] = lich_a.wait(1, timeout=60)
        assert got.accepted is not None and got.accepted["session_id"] == "card-A"
        card_a.wait_for_text(TURN_DONE, after=mark)
        _slash_new(card_a)  # nobody shows card A's thread: the daemon unloads it
        thread = str(got.accepted["provider_session_id"])
        assert not lab.holds(thread)  # (a queue racing the unload resumes nothing)
        queued = subprocess.run(
            [str(lab.client.binary), "queue", "--thread", thread, "--message", "q", "--resume"],
            env=lab.base,
            cwd=lab.dirs["projA"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert queued.returncode == 0, queued.stderr
        [left] = _wait_records(lab, before + 2)[before + 1 :]
        assert left["decision"] == "codex-daemon-thread-shared", left
        assert len(lich_a.received) == 1
        # decided after the hook exited: card A's next conversation's line says it, once
        mark = len(card_a.screen())
        _submit_until_hooked(lab, card_a, "again from card A", before + 3)
        card_a.wait_for_text("earlier Codex conversation (started", after=mark)
        card_a.wait_for_text("`codex --no-daemon`", after=mark)
        print(f"\nqueue --resume: {left['attribution']}")
        print(f"told: {card_a.screen()[mark:][-500:]}")


def _unload_at_once(lab: Lab, stack: ExitStack, delay: int = 0) -> None:
    """`thread_unload_delay_secs = delay` for a daemon started now (the running one is
    stopped, and stopped again at the end, so later tests get one with the default)."""
    from tests.real_clients.support.codex import stop_daemon

    config = lab.codex_home / "config.toml"
    seeded = config.read_text()
    stop_daemon(lab.client, lab.base)
    config.write_text(f"thread_unload_delay_secs = {delay}\n" + seeded)
    stack.callback(stop_daemon, lab.client, lab.base)
    stack.callback(config.write_text, seeded)


def _search(tui: Terminal, text: str, after: int) -> None:
    """Type `text` into the resume picker's search and wait until its search line shows all of
    it. The TUI repaints only the cells that change, so the typed words reach the stream in
    pieces (CI: "Search: first of card B i", a footer repaint, then "n projE"): the whole line
    is looked for on the terminal as drawn."""
    tui.type(text)
    tui.wait_for_text(f"Search: {text}", after=after, drawn=True)


def _slash_new(tui: Terminal) -> None:
    """`/new`: typed, picked from the command popup once it shows, and the composer is back."""
    mark = len(tui.screen())
    tui.type("/new")
    tui.wait_for_text("start a new chat", after=mark)
    tui.press_enter()
    tui.wait_for_text(READY, after=mark)


def _submit_until_hooked(lab: Lab, tui: Terminal, prompt: str, count: int) -> None:
    """Submit `prompt` and wait for the hook's record; Enter again if the TUI took the first
    Enter as part of a paste (the prompt stays in its composer)."""
    tui.submit(prompt)
    for _ in range(3):
        if len(_wait_records(lab, count, timeout=15)) >= count:
            return
        tui.press_enter()


def _answer_session_directory(lab: Lab, stack: ExitStack) -> None:
    """Answer "session directory or current directory?" with the former, in config.toml.

    A `-c` override would make the TUI run an embedded app-server (its hooks
    then see its own environment, no daemon). Restored when the test ends.
    """
    config = lab.codex_home / "config.toml"
    seeded = config.read_text()
    stack.callback(config.write_text, seeded)
    setting = 'resume_cwd = "session"\n'
    if "\n[tui]\n" in seeded:  # Codex may have written its own [tui] table by now
        config.write_text(seeded.replace("\n[tui]\n", "\n[tui]\n" + setting, 1))
    else:
        config.write_text(seeded + "\n[tui]\n" + setting)


def test_a_tui_started_under_another_name_is_counted(lab: Lab) -> None:
    """Card B's TUI started through a symlink `cx`, in card A's folder: not a process named
    codex. On the code before, it was not counted and card B's conversation went to card A,
    the one codex client seen there. Now its connection is nobody's the hook read: no card,
    and card B's person sees Codex's one line naming the fix."""
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    here = lab.dirs["projD"]
    alias = lab.root / "bin" / "cx"
    alias.parent.mkdir(exist_ok=True)
    if not alias.exists():
        alias.symlink_to(lab.client.binary)
    cx = Client("codex", alias, lab.client.version, lab.client.release)
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        card_a = start(stack, lab, lab.card_env("card-A", lich_a), here)
        card_b = stack.enter_context(Terminal(cx, lab.card_env("card-B", lich_b), here))
        card_b.wait_for_text(READY, timeout=120)
        lab.wait_connected(card_a)
        before = len(lab.records())
        mark = len(card_b.screen())
        _submit_until_hooked(lab, card_b, "hello from card B as cx", before + 1)
        [record] = _wait_records(lab, before + 1)[before:]
        assert record["decision"] == "codex-daemon-peer-unaccounted", record
        assert accepted(lich_a) == [] and accepted(lich_b) == []
        card_b.wait_for_text("codex--no-daemon", after=mark)  # the screen keeps no spaces
        print(f"\ncx: {record['attribution']}\nscreen: {card_b.screen()[mark:][-400:]}")


def test_no_daemon_cards_report_their_own(lab: Lab) -> None:
    with StandIn() as lich_d, StandIn() as lich_e, ExitStack() as stack:
        env_d = {**lab.card_env("card-D", lich_d), "LICH_HOOK_LOG": str(lab.root / "d.log")}
        env_e = {**lab.card_env("card-E", lich_e), "LICH_HOOK_LOG": str(lab.root / "e.log")}
        card_d = start(stack, lab, env_d, lab.dirs["projD"], "--no-daemon")
        card_e = start(stack, lab, env_e, lab.dirs["projE"], "--no-daemon")
        card_d.submit("hello from card D")
        [got_d] = lich_d.wait(1, timeout=60)
        card_e.submit("hello from card E")
        [got_e] = lich_e.wait(1, timeout=60)
        assert got_d.accepted is not None and got_d.accepted["session_id"] == "card-D"
        assert got_e.accepted is not None and got_e.accepted["session_id"] == "card-E"
        for env in (env_d, env_e):
            [record] = wait_for_hook(env, "SessionStart")
            assert record["decision"] == "report" and "codex_runner" not in record
        print(f"\n--no-daemon: card-D -> {got_d.accepted}\n--no-daemon: card-E -> {got_e.accepted}")


def _wait_records(lab: Lab, count: int, timeout: float = 60.0) -> list[dict[str, object]]:
    """Each hook run logs one line, after its report's answer: wait for `count` of them."""
    deadline = time.monotonic() + timeout
    while len(lab.records()) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return lab.records()


@pytest.mark.slow
def test_two_cards_restored_at_once_report_their_new_conversations(lab: Lab) -> None:
    """lich restores its cards with `codex resume <id>`, several at once: each restored TUI's
    `/new` conversation is reported on its own card, tied to the connection opened in its
    window that resumed the thread its command line names (before: 0 of 2, untied)."""
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    daemon_up(lab)
    with StandIn() as lich_a, StandIn() as lich_b:
        env_a, env_b = lab.card_env("card-A", lich_a), lab.card_env("card-B", lich_b)
        ids = {}
        with ExitStack() as stack:
            for card, env, lich, where in (
                ("card-A", env_a, lich_a, "projA"),
                ("card-B", env_b, lich_b, "projB"),
            ):
                tui = start(stack, lab, env, lab.dirs[where])
                lab.wait_connected(tui)
                settled(tui)  # the next card starts later, so each is tied
                tui.submit(f"first of {card}")
                [got] = lich.wait(1, timeout=60)
                assert got.accepted is not None and got.accepted["session_id"] == card
                ids[card] = str(got.accepted["provider_session_id"])
        before = len(lab.records())
        with ExitStack() as stack:  # restored together, as lich starts
            card_a = stack.enter_context(
                Terminal(lab.client, env_a, lab.dirs["projA"], args=("resume", ids["card-A"]))
            )
            card_b = stack.enter_context(
                Terminal(lab.client, env_b, lab.dirs["projB"], args=("resume", ids["card-B"]))
            )
            for tui in (card_a, card_b):
                tui.wait_for_text(READY, timeout=120)
            lab.wait_connected(card_a, card_b)
            _slash_new(card_a)
            _slash_new(card_b)
            _submit_until_hooked(lab, card_a, "card A restored, after /new", before + 1)
            _submit_until_hooked(lab, card_b, "card B restored, after /new", before + 2)
            records = _wait_records(lab, before + 2)[before:]
            lich_a.wait(2, timeout=60)
            lich_b.wait(2, timeout=60)
        assert [r["decision"] for r in records] == ["report", "report"], records
        for card, lich in (("card-A", lich_a), ("card-B", lich_b)):
            named = accepted(lich)
            assert [a["session_id"] for a in named] == [card, card]
            assert named[1]["provider_session_id"] != ids[card]
        print(f"\nrestored: {[(r['attribution'], r.get('decide_ms')) for r in records]}")


@pytest.mark.slow
def test_a_card_whose_neighbour_s_thread_unloads_meanwhile_is_reported(lab: Lab) -> None:
    """0.171.0 logs in a startup request's span what that thread's tasks do when it unloads
    (`serve_inner: task cancelled`), stamped then. Read as another startup request in card B's
    stretch, it left card B's TUI untied. Threads unload at once here, and card A's TUI quits
    after card B's has started: card B's conversation is card B's (before:
    codex-daemon-untied), since card A's connection was in the log before card B's TUI began."""
    if not lab.daemon:
        pytest.skip(f"Codex {lab.client.release} has no daemon: each TUI runs its own hooks")
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        _unload_at_once(lab, stack)
        daemon_up(lab)
        before = len(lab.records())
        with ExitStack() as first:
            card_a = start(first, lab, lab.card_env("card-A", lich_a), lab.dirs["projA"])
            settled(card_a)
            _submit_until_hooked(lab, card_a, "hello from card A", before + 1)
            card_b = start(stack, lab, lab.card_env("card-B", lich_b), lab.dirs["projB"])
            lab.wait_connected(card_b)
        # card A's TUI has quit: nobody shows its startup thread, which unloads at once
        settled(card_b)
        _submit_until_hooked(lab, card_b, "hello from card B", before + 2)
        a, b = _wait_records(lab, before + 2)[before:]
        assert a["decision"] in ("report", *UNPROVEN), a
        assert b["decision"] == "report", b
        assert [x["session_id"] for x in accepted(lich_b)] == ["card-B"]
        print(f"\nneighbour unloaded: {b['attribution']} ({b.get('decide_ms')} ms)")
