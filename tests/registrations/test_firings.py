"""One act per firing, never zero: the two routes' claim (lich_hooks/hook/claim.py) proven
over a stateful model of firings, with the real `claim.take` on a real state directory.

The model: a card where the plugin's route and an `install` entry may each be present or
broken (a broken one never runs); firings of a few identities (a conversation's startup,
/resume without a prompt id, compact, a worker's "Done." to one prompt and another: repeats
within seconds and minutes, back and forth); each present route's run claims at the firing's
time plus its start spread, in any order, later firings' runs overtaking earlier ones; a run
that dies before it claims (a killed process, an interpreter that cannot start).

What it assumes (true at run time, docs/install.md "Both routes at once"): both runs of one
firing claim within SPREAD of it (measured: ~5-30 ms apart, the plugin's launcher ~0.1 s
later; SPREAD leaves a loaded machine 20x that); a route's state changes (an uninstall, a
plugin disabled) take longer than CLAIM_SECONDS to reach the next firing. Under those, every
firing with a live run acts exactly once, unless a run of its identity died within
CLAIM_SECONDS before, which can cost that firing its act (stated in docs/install.md). A
loaded machine's start spread past the window costs a duplicate, never a lost act.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from lich_hooks.hook import claim
from lich_hooks.hook.state import open_dir

ROUTES = ("plugin", "install")
W = claim.CLAIM_SECONDS
SPREAD = 0.5  # within a firing, a run claims at most this long after the firing
GAP = 1.0  # two firings of one identity come at least this far apart
# identities that repeat: startup, a /resume without prompt id, compact, one answer's text
IDENTITIES = ("A\nstartup", "B\nresume", "Done.", "prompt")  # "prompt": a new prompt id


class Firing:
    __slots__ = ("acts", "dead", "identity", "live", "loaded", "runs", "time")

    def __init__(self, identity: str, time: float) -> None:
        self.identity, self.time = identity, time
        self.acts = 0
        self.dead = False  # a run of it died before it claimed
        self.live = 0  # runs that will claim
        self.runs = 0  # runs not yet claimed
        self.loaded = False  # a run claims past the window (a loaded machine)


class Firings(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.mkdtemp(prefix="lich-firings-")
        self.directory = open_dir({"LICH_HOOK_STATE_DIR": self.folder}, claim.PARTS, True)
        self.present = dict.fromkeys(ROUTES, True)
        self.clock = 1_000_000.0
        self.firings: list[Firing] = []
        self.pending: list[tuple[float, int, str, Firing]] = []  # (time, order, route, firing)
        self.order = 0

    def teardown(self) -> None:
        self.directory.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _run_until(self, until: float) -> None:
        """The pending runs that claim by `until`, in the order they claim."""
        self.pending.sort()
        while self.pending and self.pending[0][0] <= until:
            when, _, route, firing = self.pending.pop(0)
            firing.runs -= 1
            if claim.take(self.directory, claim.stamp(firing.identity), route, when):
                firing.acts += 1

    @rule(
        identity=st.sampled_from(IDENTITIES),
        gap=st.sampled_from((0.05, 1.0, 1.5, 3.0)) | st.floats(0.01, 3 * W),
        spreads=st.tuples(st.floats(0, SPREAD), st.floats(0, SPREAD)),
        loaded=st.sampled_from((False,) * 7 + (True,)),
        dies=st.tuples(st.booleans(), st.booleans()),
        death=st.integers(0, 3),
    )
    def fire(
        self,
        identity: str,
        gap: float,
        spreads: tuple[float, float],
        loaded: bool,
        dies: tuple[bool, bool],
        death: int,
    ) -> None:
        self.clock += gap
        if identity == "prompt":
            self.order += 1
            identity = f"prompt-{self.order}"  # unique, as a prompt id is
        last = max((f.time for f in self.firings if f.identity == identity), default=None)
        if last is not None and self.clock < last + GAP:
            self.clock = last + GAP
        self._run_until(self.clock)
        firing = Firing(identity, self.clock)
        self.firings.append(firing)
        for route, spread, dead in zip(ROUTES, spreads, dies, strict=True):
            if not self.present[route]:
                continue
            if dead and death == 0:  # one firing in four has a run that dies
                firing.dead = True
                continue
            delay = spread * (3 * W / SPREAD if loaded else 1.0)
            firing.loaded |= delay > SPREAD
            firing.live += 1
            firing.runs += 1
            self.order += 1
            self.pending.append((self.clock + delay, self.order, route, firing))

    @rule(route=st.sampled_from(ROUTES))
    def toggle(self, route: str) -> None:
        """A route uninstalled, broken, disabled, or back: not within the window of a firing."""
        self.clock += W + 3 * W
        self._run_until(self.clock)
        self.present[route] = not self.present[route]

    @precondition(lambda self: bool(self.pending))
    @rule()
    def settle(self) -> None:
        self.clock += 4 * W
        self._run_until(self.clock)

    @invariant()
    def one_act_per_firing_never_zero(self) -> None:
        groups: dict[str, list[Firing]] = {}
        for firing in self.firings:
            groups.setdefault(firing.identity, []).append(firing)
        for identity, firings in groups.items():
            if any(f.runs for f in firings):
                continue  # not all their runs have claimed yet
            # the one loss: two runs of this identity died within the window, and a live
            # run took the claim one of them left
            lossy = any(
                a is not b and a.dead and b.dead and abs(a.time - b.time) < 2 * W
                for a in firings
                for b in firings
            )
            live = [f for f in firings if f.live]
            assert all(f.acts <= f.live for f in firings)
            if any(f.loaded for f in firings):
                # a run started later than the next firing of its identity (same identity,
                # same report) may act for that one: no act lost over the identity
                if not lossy:
                    assert sum(f.acts for f in live) >= len(live), identity
                continue
            for firing in live:
                assert firing.acts <= 1, f"{firing.acts} acts for {identity!r}"
                if not (lossy and firing.dead):
                    assert firing.acts >= 1, f"no act for {identity!r} at {firing.time}"


Firings.TestCase.settings = settings(
    max_examples=int(os.environ.get("MODEL_EXAMPLES", "300")),
    stateful_step_count=40,
    deadline=None,
    print_blob=True,
)
TestFirings = pytest.mark.slow(Firings.TestCase)
