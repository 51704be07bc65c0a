"""Proven over every interleaving the model allows: no tool call under `crush server` is
ever reported on a card other than the one whose client runs the session.

The model (model_crush.py) says what it assumes; docs/harnesses.md (Crush)
states the rule and the figures.
"""

from __future__ import annotations

import os

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from tests.shared_process.model_crush import CARDS, DIRS, Crush, Server

card = st.sampled_from(CARDS[:2]) | st.sampled_from((CARDS[2], None))
where = st.sampled_from(DIRS[:2]) | st.sampled_from(DIRS)
index = st.integers(0, 63)


class CrushServer(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.server = Server()

    def _client(self, i: int) -> Crush:
        live = self.server.connected()
        return live[i % len(live)]

    @precondition(lambda self: len(self.server.connected()) < 4)
    @rule(
        who=card,
        cwd=where,
        cd=st.none() | where,
        env_readable=st.booleans(),
        run=st.booleans(),
        odd=st.integers(0, 9),
        seen=st.integers(0, 9),
    )
    def join(
        self,
        who: str | None,
        cwd: str,
        cd: str | None,
        env_readable: bool,
        run: bool,
        odd: int,
        seen: int,
    ) -> None:
        readable = env_readable or odd > 0
        self.server.join(who, cwd, cd, env_readable=readable, run=run, visible=seen > 0)

    @precondition(lambda self: bool(self.server.connected()))
    @rule(i=index, hook_runs=st.booleans(), odd=st.integers(0, 9))
    def tool_call(self, i: int, hook_runs: bool, odd: int) -> None:
        self.server.tool_call(self._client(i), hook_runs=hook_runs or odd > 0)

    @precondition(lambda self: bool(self.server.busy))
    @rule(i=index, hook_runs=st.booleans(), odd=st.integers(0, 9))
    def background_call(self, i: int, hook_runs: bool, odd: int) -> None:
        self.server.background_call(i, hook_runs=hook_runs or odd > 0)

    @precondition(lambda self: bool(self.server.connected()))
    @rule(i=index)
    def finish(self, i: int) -> None:
        self.server.finish(self._client(i))

    @precondition(lambda self: bool(self.server.connected()))
    @rule(i=index)
    def new_session(self, i: int) -> None:
        self.server.new_session(self._client(i))

    @precondition(lambda self: bool(self.server.connected()))
    @rule(i=index, j=index)
    def continue_session(self, i: int, j: int) -> None:
        client = self._client(i)
        mine = sorted(s for s, d in self.server.sessions.items() if d == client.dir)
        if mine:
            self.server.continue_session(client, mine[j % len(mine)])

    @precondition(lambda self: bool(self.server.connected()))
    @rule(i=index, clean=st.booleans())
    def leave(self, i: int, clean: bool) -> None:
        self.server.leave(self._client(i), clean)

    @rule(shut_down=st.booleans())
    def idle(self, shut_down: bool) -> None:
        self.server.idle(shut_down)

    @initialize(who=card, cwd=where)
    def first(self, who: str | None, cwd: str) -> None:
        """Every run starts with one client, so no draw is spent on an empty server."""
        self.server.join(who, cwd)

    @invariant()
    def never_the_wrong_card(self) -> None:
        for call in self.server.events[-1:]:
            assert not call.wrong, (
                f"{call.session} in {call.cwd} by {call.client.card}'s client "
                f"{call.client.pid} {call.client.argv} was reported on {call.named}: {call.found}"
            )


CrushServer.TestCase.settings = settings(
    max_examples=int(os.environ.get("MODEL_EXAMPLES", "1000")),
    stateful_step_count=30,
    deadline=None,
    print_blob=True,
)
TestCrushServer = CrushServer.TestCase
