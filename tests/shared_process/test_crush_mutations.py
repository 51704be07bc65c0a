"""Each rule of the Crush server attribution, deleted in turn, names a wrong card on a
replayed sequence of the model (model_crush.py): the tests of the rule can fail. The
real rule refuses each sequence."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lich_hooks.hook.shared.crush import decide
from tests.shared_process.model_crush import CARDS, DIRS, Call, Server

A, B = CARDS[:2]
CHOOSE = decide.choose


def a_client_under_another_name(server: Server) -> Call | None:
    """Card B's crush, started as `cx` (or another user's, non-dumpable), in card A's
    folder: the probe sees its connection and no crush process holding it."""
    server.join(A, DIRS[0])
    tui_b = server.join(B, DIRS[0], visible=False)
    return server.tool_call(tui_b)


def a_client_that_left_before_the_hook(server: Server) -> Call | None:
    """Card B's `crush run` in card A's folder starts a turn and quits; the turn runs on
    for card A's TUI, and its next tool call comes with only card A's client connected."""
    server.join(A, DIRS[0])
    run_b = server.join(B, DIRS[0], run=True)
    server.tool_call(run_b, hook_runs=False)
    server.leave(run_b)
    return server.background_call(0)


def _without_accounting(
    peers: set[int], holders: list[decide.Client], server_uid: int | None
) -> list[decide.Client]:
    """ "Every connection held by a crush client read", deleted."""
    return list(holders)


def _without_viewers(
    workspace: decide.Workspace,
    session: str,
    holds_session: bool,
    clients: list[decide.Client] | None,
    where: None = None,
    viewers: int | None = None,
) -> decide.Attribution:
    """ "A session no TUI shows names no card", deleted."""
    return CHOOSE(workspace, session, holds_session, clients, where, None)


MUTANTS: list[tuple[str, str, Callable[..., object], Callable[[Server], Call | None]]] = [
    ("every peer accounted for", "account", _without_accounting, a_client_under_another_name),
    (
        "no card when no TUI shows it",
        "choose",
        _without_viewers,
        a_client_that_left_before_the_hook,
    ),
]


@pytest.mark.parametrize(
    ("rule", "name", "mutant", "sequence"), MUTANTS, ids=[m[0] for m in MUTANTS]
)
def test_each_rule_deleted_names_a_wrong_card(
    rule: str,
    name: str,
    mutant: Callable[..., object],
    sequence: Callable[[Server], Call | None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    call = sequence(Server())
    assert call is not None and call.found is not None
    assert not call.wrong and call.named is None, call.found  # the real rule refuses
    monkeypatch.setattr(decide, name, mutant)
    call = sequence(Server())
    assert call is not None and call.wrong, f"deleting {rule!r} went unnoticed: {call}"
