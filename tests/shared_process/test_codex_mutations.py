"""Each condition of the Codex tie (decide.from_evidence, tie, connected_at), deleted
or weakened in decide.py's own text, makes a test red here: on a replayed sequence of the model
(model_codex.py), or on log rows where the model has none, the real rule refuses and the mutant
names a card that did not start the conversation ("wrong"); or the real rule names the right
card and the mutant loses it ("lost"); or, where the answer is the same, the mutant tells the
person a false cause ("cause"). A row whose text is no longer in decide.py fails: the table
follows the code. The window's bounds can only be "lost" rows: any wider window that holds the
TUI's own connection ties exactly, refusing more; the "wrong" rows are what makes it hold it.
Peer accounting has no row: the tie alone never needs it, so an unaccounted peer refusing is
policy (docs/harnesses.md, Codex).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest

from lich_hooks.hook.shared.codex import decide
from tests.shared_process.model_codex import CARDS, DIRS, Daemon, Event, Tui

A, B, C = CARDS
SOURCE = Path(decide.__file__).read_text()
Edit = tuple[str, str]


def mutant(edits: Sequence[Edit]) -> ModuleType:
    """decide.py with each (text, replacement) made once."""
    text = SOURCE
    for find, replace in edits:
        assert text.count(find) == 1, f"not once in decide.py (the row is stale): {find!r}"
        text = text.replace(find, replace)
    module = ModuleType("decide_mutant")
    exec(compile(text, decide.__file__, "exec"), module.__dict__)
    return module


# --- sequences on the model: each returns the SessionStart judged --------------------------


def _judged(daemon: Daemon, event: Event | None, wait: float = 30) -> Event:
    daemon.wait(wait)  # nothing more is written: the sender's wait ends
    assert event is not None
    return event


def _b_s_turn_judged(daemon: Daemon, tui_b: Tui) -> Event:
    """Card B's TUI runs a 3 s turn; the log is written through it and judged."""
    event = daemon.turn(tui_b, lasts=3.0)
    daemon.wait(4)
    daemon.flush()
    return _judged(daemon, event)


def nothing_written_after_the_hook(daemon: Daemon) -> Event:
    """Card A reports its thread and `/new`s; `codex queue --resume` (card B's) resumes A's
    thread and leaves before the hook, and the daemon writes nothing more: the rows read
    name A's connection alone."""
    tui_a = daemon.start(A, DIRS[0])
    daemon.wait(2)
    daemon.turn(tui_a)
    daemon.wait(1)
    daemon.flush()
    thread = tui_a.thread
    daemon.wait(0.5)
    daemon.slash_new(tui_a)
    return _judged(daemon, daemon.departed(B, DIRS[0], thread))


def queue_resumes_a_s_thread(daemon: Daemon, flush: bool = True) -> Event:
    """The same, with the daemon writing the hook's turn row but not yet the resume's own
    thread row (and, with `flush`, that row later)."""
    tui_a = daemon.start(A, DIRS[0])
    daemon.wait(2)
    daemon.turn(tui_a)
    daemon.wait(1)
    daemon.flush()
    thread = tui_a.thread
    daemon.wait(0.5)
    daemon.slash_new(tui_a)
    event = daemon.departed(None, DIRS[0], thread)
    daemon.wait(0.1)
    daemon.flush()
    if flush:
        daemon.wait(3)
        daemon.flush()
    return _judged(daemon, event)


def queue_before_the_write(daemon: Daemon) -> Event:
    return queue_resumes_a_s_thread(daemon, flush=False)


def a_second_tui_reports(daemon: Daemon) -> Event:
    """Card A's TUI, then card B's well after it: B's conversation is B's."""
    tui_a = daemon.start(A, DIRS[0])
    daemon.wait(2)
    daemon.turn(tui_a)
    daemon.wait(5)
    tui_b = daemon.start(B, DIRS[1])
    return _b_s_turn_judged(daemon, tui_b)


def a_card_after_the_log_dropped_its_window(daemon: Daemon) -> Event:
    """Card B's TUI is tied at its first conversation; card A's then starts and works on
    (thirteen turns: Codex drops the rows of B's window); B's `/new` is B's by the tie its
    first conversation's sender proved and remembered."""
    tui_b = daemon.start(B, DIRS[1])
    daemon.wait(2)
    daemon.turn(tui_b)
    daemon.wait(12)
    daemon.flush()
    tui_a = daemon.start(A, DIRS[0])
    for _ in range(13):
        daemon.wait(3)
        daemon.turn(tui_a)
    daemon.wait(12)
    daemon.flush()
    daemon.slash_new(tui_b)
    return _b_s_turn_judged(daemon, tui_b)


def _seeded(daemon: Daemon, card: str, where: str) -> str:
    """A thread of `card`'s, recorded, its TUI gone."""
    seed = daemon.start(card, where)
    daemon.wait(2)
    daemon.turn(seed)
    daemon.quit(seed)
    daemon.wait(5)
    return seed.thread


def two_restored_at_once(daemon: Daemon) -> Event:
    """lich restores cards A and B with `codex resume <id>`, B 0.2 s after A: each window
    holds both connections; each resumed its own card's thread. B's `/new` is B's."""
    x, y = _seeded(daemon, A, DIRS[0]), _seeded(daemon, B, DIRS[1])
    daemon.start(A, DIRS[0], resume=x)
    daemon.wait(0.2)
    tui_b = daemon.start(B, DIRS[1], resume=y)
    daemon.wait(3)
    daemon.slash_new(tui_b)
    return _b_s_turn_judged(daemon, tui_b)


def a_plain_and_a_restored_tui_together(daemon: Daemon) -> Event:
    """Card B's plain TUI starts 0.2 s after lich restores card A with `codex resume X`: B's
    window holds both connections, and B's is the one that sent a startup request."""
    x = _seeded(daemon, A, DIRS[0])
    daemon.start(A, DIRS[0], resume=x)
    daemon.wait(0.2)
    tui_b = daemon.start(B, DIRS[1])
    daemon.wait(3)
    return _b_s_turn_judged(daemon, tui_b)


def a_fork_alone_reports(daemon: Daemon) -> Event:
    """Card B's TUI started as `codex fork X`, alone in its window: its `/new` is B's."""
    x = _seeded(daemon, C, DIRS[2])
    tui_b = daemon.start(B, DIRS[1], resume=x, fork=True)
    daemon.wait(3)
    daemon.slash_new(tui_b)
    return _b_s_turn_judged(daemon, tui_b)


def an_earlier_tui_reports_after_a_later_one_started(daemon: Daemon) -> Event:
    """Card B's TUI, then card A's 5 s later; B's first conversation after that is B's."""
    tui_b = daemon.start(B, DIRS[1])
    daemon.wait(5)
    daemon.start(A, DIRS[0])
    daemon.wait(3)
    return _b_s_turn_judged(daemon, tui_b)


# --- rows on log rows where the model has none ---------------------------------------------

CARD_A = {"LICH_SESSION_ID": A, "LICH_PORT": "4700", "LICH_TOKEN": "tok-card-A"}
CARD_B = {"LICH_SESSION_ID": B, "LICH_PORT": "4701", "LICH_TOKEN": "tok-card-B"}
S1 = "019a0000-0000-7000-8000-000000000001"
STARTED = 1000.0  # the TUI's start; each row's times are after it
Opened = dict[int, decide.Opened]


def _client(pid: int, lich: dict[str, str], *args: str) -> decide.Client:
    client = decide.Client(pid, ["codex", *args], "/w", lich)
    client.started = STARTED
    return client


def _judge(
    rule: ModuleType,
    client: decide.Client,
    connects: list[decide.Connect],
    opened: Opened,
    thread_on: int,
    seen: float = STARTED + 11,
    floor: float = STARTED - 100,
    since: float = 0.0,
) -> decide.Attribution:
    """The conversation started on connection `thread_on` just before `seen`, `client` the
    one connected: what the rule says."""
    held = {client.pid: rule.tie(client, seen, since, connects, opened, floor, {})}
    rows = [(seen - 0.5, "thread/start", thread_on)]
    return rule.from_evidence(rows, [client], held, seen, seen - 0.2)  # type: ignore[no-any-return]


def a_connect_row_of_another_pid(rule: ModuleType) -> decide.Attribution:
    """Card A's TUI (pid 700) has no connect row of its own yet (a TUI writes its rows in its
    own batches); a TUI that quit (701), started just after it, logged one, and its connection
    started the conversation."""
    queued: Opened = {5: (STARTED + 0.2, STARTED + 0.3, decide.STARTUP)}
    return _judge(rule, _client(700, CARD_A), [(STARTED + 0.5, 701)], queued, 5)


def an_earlier_process_s_connect_row(rule: ModuleType) -> decide.Attribution:
    """Card B's TUI (pid 700) beside a connect row an earlier process with its pid logged."""
    own: Opened = {5: (STARTED + 0.2, STARTED + 0.3, decide.STARTUP)}
    connects = [(STARTED - 500, 700), (STARTED + 0.5, 700)]
    return _judge(rule, _client(700, CARD_B), connects, own, 5)


def a_tui_from_before_a_restart(rule: ModuleType) -> decide.Tie:
    """Card A's TUI connected before the daemon restarted (it reconnects and logs nothing)."""
    client = _client(700, CARD_A)
    return rule.tie(client, STARTED + 60, STARTED + 50, [(STARTED + 0.3, 700)], {}, 0.0, {})  # type: ignore[no-any-return]


def judged_before_its_window_is_read(rule: ModuleType) -> decide.Attribution:
    """Card A's TUI logged its connect (its own batch) and the daemon's rows are read only to
    0.1 s before it: its own connection is not in them yet, a queued client's is."""
    queued: Opened = {9: (STARTED + 0.1, STARTED + 0.1, "")}
    connects = [(STARTED + 0.5, 700)]
    return _judge(rule, _client(700, CARD_A), connects, queued, 9, seen=STARTED + 0.4)


def a_window_the_log_dropped_part_of(rule: ModuleType) -> decide.Attribution:
    """Codex dropped the oldest rows of card A's window (its connection's), and kept a queued
    client's opened later in it."""
    queued: Opened = {9: (STARTED + 0.6, STARTED + 0.6, "")}
    connects = [(STARTED + 1.0, 700)]
    return _judge(rule, _client(700, CARD_A), connects, queued, 9, floor=STARTED + 0.55)


def nothing_in_its_window(rule: ModuleType) -> decide.Tie:
    client = _client(700, CARD_A)
    return rule.tie(client, STARTED + 11, 0.0, [(STARTED + 0.5, 700)], {}, 0.0, {})  # type: ignore[no-any-return]


def a_fork_beside_another(rule: ModuleType) -> decide.Tie:
    """`codex fork X` with another connection in its window that shows no first request yet
    (judged within REQUEST_SPAN of its connect: a fork has no request of its kind to wait for)."""
    opened: Opened = {
        4: (STARTED + 0.3, STARTED + 0.3, None),
        5: (STARTED + 0.35, STARTED + 0.4, ""),
    }
    client = _client(700, CARD_A, "fork", S1)
    return rule.tie(client, STARTED + 5, 0.0, [(STARTED + 0.5, 700)], opened, 0.0, {})  # type: ignore[no-any-return]


def _beside_a_queue(rule: ModuleType, own: str | None, *args: str) -> decide.Attribution:
    """Card A's TUI (`args`) whose window also holds a queued client's connection (4: it
    resumed S1, then started the conversation and left); A's own connection (5) shows `own`
    as its first thread request."""
    opened: Opened = {
        4: (STARTED + 0.3, STARTED + 0.3, S1),
        5: (STARTED + 0.35, STARTED + 0.4, own),
    }
    return _judge(rule, _client(700, CARD_A, *args), [(STARTED + 0.5, 700)], opened, 4)


def its_own_resume_not_shown_yet(rule: ModuleType) -> decide.Attribution:
    return _beside_a_queue(rule, None, "resume", S1)


def two_resumes_of_its_thread(rule: ModuleType) -> decide.Attribution:
    return _beside_a_queue(rule, S1, "resume", S1)


def a_fork_of_the_thread_a_queue_resumed(rule: ModuleType) -> decide.Attribution:
    return _beside_a_queue(rule, "", "fork", S1)


def a_thread_the_log_does_not_show(rule: ModuleType) -> decide.Attribution:
    client = _client(700, CARD_A)
    return rule.from_evidence([], [client], {700: 5}, STARTED + 11, STARTED + 10.5)  # type: ignore[no-any-return]


# --- the table -----------------------------------------------------------------------------

Sequence_ = Callable[[Daemon], Event]
Rows = Callable[[ModuleType], object]
WRONG, LOST, CAUSE = "wrong", "lost", "cause"

MUTATIONS: list[tuple[str, list[Edit], str, Sequence_ | Rows]] = [
    # from_evidence
    (
        "the log is read past the hook",
        [("if seen < hook_started or not rows:", "if not rows:")],
        WRONG,
        nothing_written_after_the_hook,
    ),
    (
        "begun requests show their thread",
        [("    if pending:\n", "    if False:\n")],
        WRONG,
        queue_before_the_write,
    ),
    (
        "one connection per thread",
        [
            ("if len(connections) > 1:", "if False:"),
            ("[connection] = connections", "connection = min(connections)"),
        ],
        WRONG,
        queue_resumes_a_s_thread,
    ),
    (
        "the log names the thread",
        [("if seen < hook_started or not rows:", "if seen < hook_started:")],
        "raises",
        a_thread_the_log_does_not_show,
    ),
    # connected_at
    (
        "a connect row of its own",
        [("if pid == client.pid and start is not None", "if start is not None")],
        WRONG,
        a_connect_row_of_another_pid,
    ),
    (
        "a connect row after its start",
        [("and start is not None and start <= t)", "and start is not None)")],
        LOST,
        an_earlier_process_s_connect_row,
    ),
    # tie: what makes its window hold its own connection
    (
        "the log read through its connect",
        [("    if seen < connect:\n", "    if False:\n")],
        WRONG,
        judged_before_its_window_is_read,
    ),
    (
        "the log whole since its start",
        [("if floor >= start or not window:", "if not window:")],
        WRONG,
        a_window_the_log_dropped_part_of,
    ),
    # tie: beside others, its own kind
    (
        "every connection in its window shows its first thread request",
        [("    if None in firsts:\n", "    if False:\n")],
        WRONG,
        its_own_resume_not_shown_yet,
    ),
    (
        "exactly one of its kind",
        [
            (
                "return hits[0] if len(hits) == 1 else TOGETHER",
                "return hits[0] if hits else TOGETHER",
            )
        ],
        WRONG,
        two_resumes_of_its_thread,
    ),
    (
        "`codex fork <id>` asks nothing of its own kind",
        [('switched[1] if switched[0] == "resume" else None', "switched[1]")],
        WRONG,
        a_fork_of_the_thread_a_queue_resumed,
    ),
    # tie: coverage (a wider window, or fewer ties, only refuses)
    (
        "a tie remembered",
        [("    if (client.pid, connect) in remembered:\n", "    if False:\n")],
        LOST,
        a_card_after_the_log_dropped_its_window,
    ),
    (
        "its window begins at its start",
        [("if start <= born <= connect and", "if born <= connect and")],
        LOST,
        a_second_tui_reports,
    ),
    (
        "its window ends at its connect",
        [("if start <= born <= connect and", "if start <= born and")],
        LOST,
        an_earlier_tui_reports_after_a_later_one_started,
    ),
    (
        "a connection in its window asked something (not a probe)",
        [("start <= born <= connect and asked <= seen", "start <= born <= connect")],
        LOST,
        a_second_tui_reports,
    ),
    (
        "alone in its window, the connection is its own",
        [("    if len(window) == 1:\n", "    if False:\n")],
        LOST,
        a_fork_alone_reports,
    ),
    (
        "its kind tells it from the others",
        [("hits = [c for c in window if opened[c][2] == want]", "hits = window")],
        LOST,
        two_restored_at_once,
    ),
    (
        "a plain TUI's kind is its startup request",
        [("want = STARTUP if switched is None", "want = None if switched is None")],
        LOST,
        a_plain_and_a_restored_tui_together,
    ),
    # tie: the cause told
    (
        "connected in this daemon's life",
        [("    if connect < since:\n", "    if False:\n")],
        CAUSE,
        a_tui_from_before_a_restart,
    ),
    (
        "a window with no connection in it",
        [("if floor >= start or not window:", "if floor >= start:")],
        CAUSE,
        nothing_in_its_window,
    ),
    (
        "a TUI with no kind of its own beside others",
        [("    if want is None:\n", "    if False:\n")],
        CAUSE,
        a_fork_beside_another,
    ),
]


def _verdict(run: Sequence_ | Rows, rule: ModuleType, monkeypatch: pytest.MonkeyPatch) -> object:
    """A sequence's judged SessionStart under `rule`, or the answer on its rows."""
    if run.__name__ in _ROWS:
        return run(rule)  # type: ignore[arg-type]
    monkeypatch.setattr(decide, "tie", rule.tie)
    monkeypatch.setattr(decide, "from_evidence", rule.from_evidence)
    return run(Daemon())  # type: ignore[arg-type]


_ROWS = {
    f.__name__
    for f in (
        a_connect_row_of_another_pid,
        an_earlier_process_s_connect_row,
        a_tui_from_before_a_restart,
        judged_before_its_window_is_read,
        a_window_the_log_dropped_part_of,
        nothing_in_its_window,
        a_fork_beside_another,
        its_own_resume_not_shown_yet,
        two_resumes_of_its_thread,
        a_fork_of_the_thread_a_queue_resumed,
        a_thread_the_log_does_not_show,
    )
}


@pytest.mark.parametrize(("rule", "edits", "kind", "run"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_each_condition_of_the_tie_can_fail_a_test(
    rule: str,
    edits: list[Edit],
    kind: str,
    run: Sequence_ | Rows,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = _verdict(run, decide, monkeypatch)
    changed = mutant(edits)
    if kind == "raises":
        assert getattr(real, "lich", "") is None, real
        with pytest.raises(ValueError):
            _verdict(run, changed, monkeypatch)
        return
    after = _verdict(run, changed, monkeypatch)
    if kind == CAUSE:
        assert real != after, f"deleting {rule!r} changed no cause: {real}"
        return
    (found_real, wrong_real), (found_after, wrong) = _found(real), _found(after)
    if kind == WRONG:
        assert found_real.lich is None, f"the real rule names a card: {found_real}"
        assert wrong, f"deleting {rule!r} went unnoticed: {found_after}"
    else:
        assert found_real.lich is not None and not wrong_real, found_real
        assert found_after.lich is None, f"deleting {rule!r} lost nothing: {found_after}"


def _found(verdict: object) -> tuple[decide.Attribution, bool]:
    """The answer, and whether it names a wrong card (on rows the conversation is card B's)."""
    if isinstance(verdict, Event):
        assert verdict.found is not None
        return verdict.found, verdict.wrong
    assert isinstance(verdict, decide.Attribution)
    return verdict, verdict.lich is not None and dict(verdict.lich) != CARD_B


def _settled(daemon: Daemon, event: Event | None) -> Event:
    daemon.wait(12)
    daemon.flush()
    daemon.wait(30)  # nothing more is written: the sender's wait ends
    assert event is not None
    return event


@pytest.mark.parametrize("seen", ["another name", "unreadable"])
def test_card_b_s_client_the_probe_cannot_read_names_no_card(seen: str) -> None:
    """Card B's TUI in card A's folder, started as `cx` (or another user's, non-dumpable):
    its conversation is never reported on card A, the one client the probe reads there."""
    daemon = Daemon()
    daemon.start(A, DIRS[0])
    daemon.wait(5)
    tui_b = daemon.start(B, DIRS[0], visible=seen != "another name", env_readable=False)
    daemon.wait(5)
    event = _settled(daemon, daemon.turn(tui_b))
    assert event.found is not None and event.named is None, event.found


def test_a_client_that_left_before_the_hook_names_no_card() -> None:
    """`codex queue` (or a raw client) starts a thread in card A's folder, runs its turn
    and leaves before the hook: card A's TUI is the only client left, and is not named."""
    daemon = Daemon()
    daemon.start(A, DIRS[0])
    daemon.wait(5)
    event = _settled(daemon, daemon.departed(B, DIRS[0]))
    assert event.found is not None and event.named is None, event.found


def _late_own_request(daemon: Daemon, resumed: bool) -> Event:
    """Card B's TUI sends its first request 2.5 s after its connect; card A's TUI, past B's
    window, sends its own late too (`resumed`: A is restored as `codex resume X` and B
    `/resume`s X, `/new`s). The daemon writes once between the two late requests, then
    nothing; B quits before its hook."""
    x = ""
    if resumed:
        seed = daemon.start(C, DIRS[2])
        daemon.wait(2)
        daemon.turn(seed)
        daemon.quit(seed)
        x = seed.thread
        daemon.wait(5)
        tui_b = daemon.start(B, DIRS[1])
        daemon.wait(5)
        tui_a = daemon.start(A, DIRS[0], resume=x, gap=0.3, late=2.5)
        daemon.wait(1.0)
        daemon.slash_resume(tui_b, x, "session")
        daemon.slash_new(tui_b)
        event = daemon.turn(tui_b, leaves=True, lasts=0.5)
        daemon.wait(tui_a.connected_at + 1.5 - daemon.now)
    else:
        tui_b = daemon.start(B, DIRS[1], gap=0.3, late=2.5)
        daemon.wait(1.5)
        daemon.start(A, DIRS[0], gap=0.3, late=2.5)
        event = daemon.turn(tui_b, leaves=True)
        daemon.wait(tui_b.started + 3.0 - daemon.now)
    daemon.flush()
    return _judged(daemon, event)


@pytest.mark.parametrize("resumed", [False, True], ids=["plain", "resumed"])
def test_a_tui_whose_own_request_is_late_is_not_tied_to_another_s(resumed: bool) -> None:
    """Found on the model's own draws (a request 2.5 s after its connect): the tie by the one
    startup request in a window's stretch (or the one resume of its thread since its start)
    took card B's for card A's, and card B's conversation was reported on card A. The
    connection card B's TUI opened before card A's started is not in A's window."""
    event = _late_own_request(Daemon(), resumed)
    assert event.found is not None and not event.wrong, event.found
