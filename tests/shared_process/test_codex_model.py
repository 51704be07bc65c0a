"""Proven over every interleaving the model allows: no SessionStart under Codex's daemon is
ever reported on a card other than the one whose TUI runs the conversation.

The model (model_codex.py) says what it assumes; the rule it proves is in
docs/harnesses.md (Codex). Steps and examples are sized for the default test
run (docs/harnesses.md gives the figures).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from tests.shared_process.model_codex import CARDS, DIRS, Daemon

card = st.sampled_from(CARDS[:2]) | st.sampled_from((CARDS[2], None))
where = st.sampled_from(DIRS[:2]) | st.sampled_from(DIRS)
index = st.integers(0, 63)
gap = st.sampled_from((0.3, 1.0, 4.0, 12.0))
# a TUI's first request after its connect: measured 0.01-0.15 s; later when stalled or busy
late = st.sampled_from((0.02, 0.02, 1.3, 2.5))
# where between its start and its connect a TUI opens its session's connection
opens = st.sampled_from((0.1, 0.5, 0.9))


class CodexDaemon(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.daemon = Daemon()

    def _tui(self, i: int):  # type: ignore[no-untyped-def]
        live = self.daemon.connected()
        return live[i % len(live)]

    @precondition(lambda self: len(self.daemon.connected()) < 4)
    @rule(
        who=card,
        cwd=where,
        cd=st.none() | where,
        env_readable=st.booleans(),
        visible=st.booleans(),
        odd=st.integers(0, 9),
        gap=gap,
        late=late,
        opens=opens,
    )
    def start(
        self,
        who: str | None,
        cwd: str,
        cd: str | None,
        env_readable: bool,
        visible: bool,
        odd: int,
        gap: float,
        late: float,
        opens: float,
    ) -> None:
        # unreadable clients are rare in life: one start in ten
        self.daemon.start(
            who,
            cwd,
            cd,
            env_readable=env_readable or odd > 0,
            visible=visible or odd > 0,
            gap=gap,
            late=late,
            opens=opens,
        )

    @precondition(lambda self: len(self.daemon.connected()) < 4 and bool(self.daemon.resumable()))
    @rule(
        who=card,
        cwd=where,
        i=index,
        session_dir=st.booleans(),
        named=st.booleans(),
        fork=st.booleans(),
        gap=gap,
        late=late,
        opens=opens,
    )
    def start_resumed(
        self,
        who: str | None,
        cwd: str,
        i: int,
        session_dir: bool,
        named: bool,
        fork: bool,
        gap: float,
        late: float,
        opens: float,
    ) -> None:
        """`codex resume <id>` (lich restoring a card), `codex fork <id>`, or with `--last`."""
        sids = self.daemon.resumable()
        self.daemon.start(
            who,
            cwd,
            resume=sids[i % len(sids)],
            session_dir=session_dir,
            named=named,
            fork=fork,
            gap=gap,
            late=late,
            opens=opens,
        )

    @precondition(lambda self: bool(self.daemon.connected()))
    @rule(
        i=index,
        hook_runs=st.booleans(),
        odd=st.integers(0, 9),
        leaves=st.integers(0, 5),
        lasts=st.sampled_from((0.01, 5.0, 30.0)),
    )
    def turn(self, i: int, hook_runs: bool, odd: int, leaves: int, lasts: float) -> None:
        tui = self._tui(i)
        self.daemon.turn(tui, hook_runs=hook_runs or odd > 0, leaves=leaves == 0, lasts=lasts)

    @precondition(lambda self: bool(self.daemon.connected()))
    @rule(i=index, clear=st.booleans())
    def new(self, i: int, clear: bool) -> None:
        self.daemon.slash_new(self._tui(i), clear)

    @precondition(lambda self: bool(self.daemon.connected()))
    @rule(i=index, j=index, choice=st.sampled_from(("session", "own", "here")))
    def resume(self, i: int, j: int, choice: str) -> None:
        tui = self._tui(i)
        sids = self.daemon.resumable(tui)
        if sids:
            self.daemon.slash_resume(tui, sids[j % len(sids)], choice)

    @precondition(lambda self: bool(self.daemon.connected()))
    @rule(i=index, source=st.sampled_from(("startup", "resume")))
    def fork(self, i: int, source: str) -> None:
        tui = self._tui(i)
        if self.daemon.threads[tui.thread].recorded is not None:
            self.daemon.slash_fork(tui, source)

    @precondition(lambda self: bool(self.daemon.connected()))
    @rule(i=index)
    def quit(self, i: int) -> None:
        self.daemon.quit(self._tui(i))

    @precondition(lambda self: any(s.startup and not s.shown for s in self.daemon.threads.values()))
    @rule(i=index)
    def unload(self, i: int) -> None:
        """The daemon unloads a startup thread no TUI shows: a late row in its startup span."""
        idle = [s.sid for s in self.daemon.threads.values() if s.startup and not s.shown]
        self.daemon.unload(idle[i % len(idle)])

    @rule(who=card, cwd=where, i=index, resume=st.booleans())
    def departed(self, who: str | None, cwd: str, i: int, resume: bool) -> None:
        sids = self.daemon.resumable()
        self.daemon.departed(who, cwd, sids[i % len(sids)] if resume and sids else None)

    @rule(seconds=st.sampled_from((0.3, 2.0, 9.0, 16.0)))
    def wait(self, seconds: float) -> None:
        self.daemon.wait(seconds)

    @rule()
    def flush(self) -> None:
        self.daemon.flush()

    @rule(odd=st.integers(0, 4))
    def restart(self, odd: int) -> None:
        if odd == 0:
            self.daemon.restart()

    @initialize(who=card, cwd=where)
    def first(self, who: str | None, cwd: str) -> None:
        """Every run starts with one client, so no draw is spent on an empty daemon."""
        self.daemon.start(who, cwd)

    @invariant()
    def never_the_wrong_card(self) -> None:
        for event in self.daemon.events:
            assert not event.wrong, (
                f"{event.source} {event.session} in {event.cwd} by {event.tui.card}'s TUI "
                f"{event.tui.pid} was reported on {event.named}: {event.found}"
            )


CodexDaemon.TestCase.settings = settings(
    max_examples=int(os.environ.get("MODEL_EXAMPLES", "1000")),
    stateful_step_count=40,
    deadline=None,
    print_blob=True,
)
TestCodexDaemon = pytest.mark.slow(CodexDaemon.TestCase)
