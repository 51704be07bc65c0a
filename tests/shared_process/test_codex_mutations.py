"""Each rule of the Codex attribution, deleted in turn, names a wrong card on a replayed
sequence of the model (model_codex.py): the tests of the rule can fail.

The stateful test (test_codex_model.py) at its CI budget of 1,000 examples does not
always reach the central rule's counterexample (it needs about 5,000), so each rule
has its sequence here, replayed on every run: the real rule refuses, the mutant names
the other card.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lich_hooks.hook.shared.codex import decide
from tests.shared_process.model_codex import CARDS, DIRS, Daemon, Event

A, B = CARDS[:2]
RULE = decide.attribute


def moved_by_resume_then_new(daemon: Daemon) -> Event | None:
    """Card B reports its conversation in p1 and `/new`s; card A's TUI in p0 `/resume`s it
    ("session directory": p1), `/new`s and starts a turn there: A's conversation, in p1,
    where only card B's TUI works."""
    tui_b = daemon.start(B, DIRS[1])
    daemon.turn(tui_b)
    daemon.slash_new(tui_b)
    tui_a = daemon.start(A, DIRS[0])
    [old] = daemon.resumable(tui_a)
    daemon.slash_resume(tui_a, old, "session")
    daemon.slash_new(tui_a)
    return daemon.turn(tui_a)


def a_client_the_probe_cannot_read(daemon: Daemon) -> Event | None:
    """Card B's TUI in card A's folder, started as `cx` (or another user's, unreadable):
    its conversation, with card A's TUI the only client the probe reads there."""
    daemon.start(A, DIRS[0])
    tui_b = daemon.start(B, DIRS[0], visible=False)
    return daemon.turn(tui_b)


def _without_the_central_rule(
    clients: list[decide.Client],
    cwd: str | None,
    source: str | None = None,
    recorded: str | None = None,
    unaccounted: int = 0,
) -> decide.Attribution:
    """ "A card only while every connected TUI is that card's", deleted."""
    if unaccounted:
        return RULE(clients, cwd, source, recorded, unaccounted)
    return decide.choose(clients, cwd, source, recorded)


def _without_peer_accounting(
    clients: list[decide.Client],
    cwd: str | None,
    source: str | None = None,
    recorded: str | None = None,
    unaccounted: int = 0,
) -> decide.Attribution:
    """ "Every peer accounted for by a client read", deleted."""
    return RULE(clients, cwd, source, recorded, 0)


MUTANTS: list[tuple[str, Callable[..., decide.Attribution], Callable[[Daemon], Event | None]]] = [
    ("one card while several are connected", _without_the_central_rule, moved_by_resume_then_new),
    ("every peer accounted for", _without_peer_accounting, a_client_the_probe_cannot_read),
]


@pytest.mark.parametrize(("rule", "mutant", "sequence"), MUTANTS, ids=[m[0] for m in MUTANTS])
def test_each_rule_deleted_names_a_wrong_card(
    rule: str,
    mutant: Callable[..., decide.Attribution],
    sequence: Callable[[Daemon], Event | None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    event = sequence(Daemon())
    assert event is not None and event.found is not None
    assert not event.wrong and event.named is None, event.found  # the real rule refuses
    monkeypatch.setattr(decide, "attribute", mutant)
    event = sequence(Daemon())
    assert event is not None and event.wrong, f"deleting {rule!r} went unnoticed: {event}"
