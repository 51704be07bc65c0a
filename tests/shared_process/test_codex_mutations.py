"""Each rule of the Codex attribution from evidence, deleted or weakened in turn, names a
wrong card on a replayed sequence of the model (model_codex.py): the tests of the rule
can fail. The real rule refuses each sequence; the mutant names a card that did not
start the conversation. (Peer accounting no longer has one: the tie alone never names
a wrong card, so an unaccounted peer refusing is policy, docs/harnesses.md.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pytest

from lich_hooks.hook.shared.codex import decide
from lich_hooks.hook.shared.codex.decide import REQUEST_AFTER, Client, Row
from tests.shared_process.model_codex import CARDS, DIRS, Daemon, Event

A, B = CARDS[:2]
TIE = decide.tie
FROM_EVIDENCE = decide.from_evidence
Own = Mapping[int, Sequence[float]]


def started_together_one_left(daemon: Daemon) -> Event:
    """Card B's TUI and card A's start at once (B's request first); B prompts and quits
    before its hook: A's window holds B's request, its own comes later."""
    daemon.start(A, DIRS[0], gap=4.0)
    tui_b = daemon.start(B, DIRS[1], gap=0.3)
    event = daemon.turn(tui_b, leaves=True)
    daemon.wait(5)
    daemon.flush()
    daemon.wait(20)  # nothing more is written: the sender's wait ends
    assert event is not None
    return event


def slow_start_one_left(daemon: Daemon) -> Event:
    """Card A's TUI takes 12 s to connect (a first start copying the daemon); card B's
    starts with it, prompts and quits before its hook."""
    daemon.start(A, DIRS[0], gap=12.0)
    tui_b = daemon.start(B, DIRS[1], gap=0.3)
    event = daemon.turn(tui_b, leaves=True)
    daemon.wait(14)
    daemon.flush()
    daemon.wait(30)
    assert event is not None
    return event


def judged_before_a_s_request(daemon: Daemon) -> Event:
    """As above, but the daemon's last write came after A logged its connect and before
    A's startup request, and nothing follows within the sender's wait."""
    daemon.start(A, DIRS[0], gap=4.0)
    tui_b = daemon.start(B, DIRS[1], gap=0.3)
    event = daemon.turn(tui_b, leaves=True, lasts=2.0)
    daemon.wait(4.0 - 0.01 - daemon.now + tui_b.started)
    daemon.flush()
    daemon.wait(30)
    assert event is not None
    return event


def queue_resumes_a_s_thread(daemon: Daemon, flush: bool = True) -> Event:
    """Card A reports its thread and `/new`s; `codex queue --resume` (outside lich) resumes
    that thread, runs its turn and leaves before the hook."""
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
    daemon.flush()  # the hook's turn row is in, the resume's own thread row not yet
    if flush:
        daemon.wait(3)
        daemon.flush()
    daemon.wait(30)
    assert event is not None
    return event


def queue_before_the_write(daemon: Daemon) -> Event:
    """The same, judged when the sender's wait ended with no write past the hook."""
    return queue_resumes_a_s_thread(daemon, flush=False)


def reconnected_after_a_restart(daemon: Daemon) -> Event:
    """Card A's TUI starts; the daemon restarts right after A's startup request (A
    reconnects, sending nothing); card B's TUI starts, prompts and quits before its hook:
    B's request falls within REQUEST_AFTER of A's connect."""
    tui_a = daemon.start(A, DIRS[0], gap=1.0)
    daemon.wait(1.2)
    daemon.flush()
    daemon.restart()
    tui_b = daemon.start(B, DIRS[1], gap=0.3)
    event = daemon.turn(tui_b, leaves=True)
    daemon.wait(5)
    daemon.slash_new(tui_a)  # the daemon writes on
    daemon.flush()
    daemon.wait(20)
    assert event is not None
    return event


def _tie_first_request(
    client: Client, startups: Sequence[Row], seen: float, since: float, own: Own
) -> int | None:
    """ "No other startup request in the window", weakened: the first one counts."""
    connect = decide.connected_at(client, own)
    if TIE(client, startups, seen, since, own) is None and connect and client.started:
        window = sorted(r for r in startups if client.started <= r[0] <= connect + REQUEST_AFTER)
        return window[0][2] if window else None
    return TIE(client, startups, seen, since, own)


def _tie_without_own_row(
    client: Client, startups: Sequence[Row], seen: float, since: float, own: Own
) -> int | None:
    """ "The window ends at the TUI's own connect", deleted: taken as its start."""
    return TIE(client, startups, seen, since, {client.pid: [client.started or 0.0]})


def _tie_without_waiting(
    client: Client, startups: Sequence[Row], seen: float, since: float, own: Own
) -> int | None:
    """ "The log read past its own request", deleted."""
    return TIE(client, startups, float("inf"), since, own)


def _tie_any_age(
    client: Client, startups: Sequence[Row], seen: float, since: float, own: Own
) -> int | None:
    """ "A TUI connected before the daemon started is not tied", deleted."""
    return TIE(client, startups, seen, 0.0, own)


def _first_connection(rows: Sequence[Row], *args: object) -> decide.Attribution:
    """ "Every start/resume/fork of the thread names one connection", weakened: the first."""
    return FROM_EVIDENCE([(t, m, rows[0][2]) for t, m, _ in rows], *args)  # type: ignore[arg-type]


def _without_the_flush(
    rows: Sequence[Row],
    startups: Sequence[Row],
    clients: Sequence[Client],
    seen: float,
    hook_started: float,
    since: float,
    own: Own,
    requests: Sequence[Row] = (),
) -> decide.Attribution:
    """ "The daemon wrote past the hook", deleted."""
    seen = max(seen, hook_started + decide.AFTER_HOOK)
    return FROM_EVIDENCE(rows, startups, clients, seen, hook_started, since, own, requests)


MUTANTS: list[tuple[str, str, Callable[..., object], Callable[[Daemon], Event]]] = [
    ("one startup request in the window", "tie", _tie_first_request, started_together_one_left),
    ("the window ends at its own connect", "tie", _tie_without_own_row, slow_start_one_left),
    ("the log read past its own request", "tie", _tie_without_waiting, judged_before_a_s_request),
    ("a reconnected TUI is not tied", "tie", _tie_any_age, reconnected_after_a_restart),
    ("one connection per thread", "from_evidence", _first_connection, queue_resumes_a_s_thread),
    (
        "wait for a write past the hook",
        "from_evidence",
        _without_the_flush,
        queue_before_the_write,
    ),
]


@pytest.mark.parametrize(
    ("rule", "name", "mutant", "sequence"), MUTANTS, ids=[m[0] for m in MUTANTS]
)
def test_each_rule_deleted_names_a_wrong_card(
    rule: str,
    name: str,
    mutant: Callable[..., object],
    sequence: Callable[[Daemon], Event],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    event = sequence(Daemon())
    assert event.found is not None
    assert not event.wrong and event.named is None, event.found  # the real rule refuses
    monkeypatch.setattr(decide, name, mutant)
    event = sequence(Daemon())
    assert event.found is not None and event.wrong, f"deleting {rule!r} went unnoticed: {event}"


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
