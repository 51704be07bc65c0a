"""One act per firing, none lost: the two routes' claim (lich_hooks/hook/claim.py) proven over
a stateful model of firings, with the real `claim.take` on a real state directory.

The model: a card where the plugin's route and an `install` entry may each be present or broken
(a broken one never runs); bursts of firings of one identity, any gap apart: identities that
repeat (a conversation's startup, /resume without a prompt id, compact, a worker's "Done."),
ones that come once and are claimed as repeating (a /resume's prompt id), and tool calls (an
Agent call's `tool_use_id`, claimed `once`). Each present route's run claims at the firing's
time plus its delay, in any order, later firings' runs overtaking earlier ones. A run's fate:
it claims within the measured spread (MEASURED, and up to the assumption's edge REACH), or it
dies before it claims (a killed process, an interpreter that cannot start), or it is late past
the assumption (a launcher waiting 2 s on a hanging `python3`, a loaded machine: 5.5 s, 9 s).

What it proves, per identity once all its runs have claimed (docs/install.md, "Both routes at
once"):

- a tool call acts exactly once if any of its runs lives, however late the other;
- no firing acts more often than it has live runs;
- a firing apart from the rest of its identity (no run of another firing of it within REACH of
  one of its runs) whose runs claim within the assumption acts exactly once;
- every firing with a live run has an act of its own: its run's, or (where firings overlap) the
  same report by another firing's run, made after it fired and before its last run claimed
  (each act counts for one firing), except the loss no claim can prevent (`unavoidable`): a
  firing that lost a run (it died, or came late), whose silent runs each met a claim they
  cannot tell from their firing's own.

So where the routes' spread overlaps the gap between two firings of one identity, the rule errs
toward a duplicate (lich takes the same id again: harmless), never toward a lost report (lich's
card left showing an earlier conversation), and a dead run costs at most its own firing.

The example database is off (`database=None`): a failure is printed with its reproduce blob,
never replayed in the clone that found it on every later run until its `.hypothesis/` is gone.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from lich_hooks.base.homes import stamp
from lich_hooks.hook import claim
from lich_hooks.hook.state import open_dir

ROUTES = ("plugin", "install")
REACH = claim.REACH
MEASURED = 0.26  # the widest spread measured between two runs of one firing (claim.py)
# identities that repeat: startup, a /resume without prompt id, compact, one answer's text;
# "prompt": a new prompt id each time; "call": a tool call's id, claimed once
IDENTITIES = ("A\nstartup", "B\nresume", "Done.", "prompt", "call")
CLAIMS, DIES, LATE = "claims", "dies", "late"
FATES = st.sampled_from((CLAIMS,) * 5 + (DIES, DIES, LATE))
DELAYS = st.floats(0, MEASURED) | st.floats(0, REACH - 0.001)  # a clock of microseconds
LATE_DELAYS = st.sampled_from((2.0, 5.5, 9.0)) | st.floats(REACH, 10 * REACH)
GAPS = st.sampled_from((0.3, 0.6, 0.9, 1.5, 2.5)) | st.floats(0.01, 2 * REACH)
# a firing: its gap after the last, each route's fate, delay, and delay when late
Fire = tuple[float, tuple[str, str], tuple[float, float], tuple[float, float]]
FIRING = st.tuples(
    GAPS, st.tuples(FATES, FATES), st.tuples(DELAYS, DELAYS), st.tuples(LATE_DELAYS, LATE_DELAYS)
)


class Run:
    __slots__ = ("acted", "at", "fate", "route", "seq")

    def __init__(self, route: str, fate: str, at: float) -> None:
        self.route, self.fate, self.at = route, fate, at
        self.acted: bool | None = None  # None: not yet claimed (or never: it died)
        self.seq = 0  # the how-manieth claim it was


class Firing:
    __slots__ = ("identity", "once", "runs", "time")

    def __init__(self, identity: str, time: float, once: bool) -> None:
        self.identity, self.time, self.once = identity, time, once
        self.runs: list[Run] = []

    @property
    def live(self) -> list[Run]:
        return [r for r in self.runs if r.fate != DIES]

    @property
    def acts(self) -> int:
        return sum(1 for r in self.runs if r.acted)


class Firings(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        shm = "/dev/shm" if os.path.isdir("/dev/shm") else None  # tmpfs: 100 us less per open
        self.folder = tempfile.mkdtemp(prefix="lich-firings-", dir=shm)
        self.directory = open_dir({"LICH_HOOK_STATE_DIR": self.folder}, claim.PARTS, True)
        self.present = dict.fromkeys(ROUTES, True)
        self.clock = 1_000_000.0
        self.firings: list[Firing] = []
        self.pending: list[tuple[float, int, Run, Firing]] = []  # (time, order, run, firing)
        self.order = self.seq = 0
        self.claimed: set[str] = set()  # identities whose runs claimed since the last check

    def teardown(self) -> None:
        """The runs still to claim claim, and the last firings are judged too."""
        try:
            self._run_until(float("inf"))
            self.one_act_per_firing_none_lost()
        finally:
            self.directory.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    def _run_until(self, until: float) -> None:
        """The pending runs that claim by `until`, in the order they claim."""
        self.pending.sort(key=lambda p: p[:2])
        while self.pending and self.pending[0][0] <= until:
            when, _, run, firing = self.pending.pop(0)
            label = stamp(firing.identity)
            run.acted = claim.take(self.directory, label, run.route, when, firing.once)
            self.seq += 1
            run.seq = self.seq
            self.claimed.add(firing.identity)

    @rule(
        identity=st.sampled_from(IDENTITIES),
        burst=st.lists(FIRING, min_size=1, max_size=5),
        toggle=st.sampled_from((None,) * 20 + ROUTES),
    )
    def fire(self, identity: str, burst: list[Fire], toggle: str | None) -> None:
        """One identity fires, then again (a tool call: others come), each `gap` after the last."""
        if toggle is not None:
            # a route uninstalled, broken, disabled, or back: not within reach of a firing
            self.clock += 20 * REACH
            self._run_until(self.clock)
            self.present[toggle] = not self.present[toggle]
        for gap, fates, delays, late in burst:
            if identity.startswith(("prompt", "call")):
                self.order += 1
                identity = f"{identity.partition('-')[0]}-{self.order}"  # new, as an id is
            self._fire(identity, gap, fates, delays, late)

    def _fire(
        self,
        identity: str,
        gap: float,
        fates: tuple[str, str],
        delays: tuple[float, float],
        late: tuple[float, float],
    ) -> None:
        self.clock += gap
        self._run_until(self.clock)
        firing = Firing(identity, self.clock, identity.startswith("call-"))
        self.firings.append(firing)
        for route, fate, delay, later in zip(ROUTES, fates, delays, late, strict=True):
            if not self.present[route]:
                continue
            run = Run(route, fate, self.clock + (later if fate == LATE else delay))
            firing.runs.append(run)
            if fate != DIES:
                self.order += 1
                self.pending.append((run.at, self.order, run, firing))

    @invariant()
    def one_act_per_firing_none_lost(self) -> None:
        groups: dict[str, list[Firing]] = {}
        for firing in self.firings:
            if firing.identity in self.claimed:
                groups.setdefault(firing.identity, []).append(firing)
        self.claimed.clear()
        for firings in groups.values():
            if all(r.acted is not None for f in firings for r in f.live):
                check(firings)  # all their runs have claimed


def check(firings: list[Firing]) -> None:
    owed: list[tuple[float, float, Firing]] = []  # (window's end, start, firing)
    for firing in firings:
        live = firing.live
        assert firing.acts <= len(live), f"{firing.acts} acts for {firing.identity!r}"
        if firing.once:
            assert firing.acts == min(1, len(live)), f"{firing.acts} acts for one tool call"
        elif live and not unavoidable(firing, firings):
            owed.append((max(r.at for r in live), firing.time, firing))
        others = [r for f in firings if f is not firing for r in f.live]
        apart = all(abs(r.at - mine.at) >= REACH for r in others for mine in live)
        if live and apart and all(r.fate == CLAIMS for r in firing.runs):
            assert firing.acts == 1, f"{firing.acts} acts for {firing.identity!r} at {firing.time}"
    # each firing owed an act has one of its identity's acts of its own, between its firing and
    # its last run's claim: its run's, or a duplicate another firing's run made in its place
    acts = sorted(r.at for f in firings for r in f.live if r.acted)
    for end, start, firing in sorted(owed, key=lambda o: o[:2]):
        found = next((n for n, at in enumerate(acts) if start <= at <= end), None)
        assert found is not None, f"no act for {firing.identity!r} at {firing.time}"
        del acts[found]


def unavoidable(firing: Firing, firings: list[Firing]) -> bool:
    """The loss no claim can prevent: one of the firing's runs died or was late, and each of its
    runs that stayed silent met a claim it cannot tell from its own firing's other run's: a claim
    of the other route made within REACH of it, that acted, with no run of its own route within
    REACH of that claim before it (so that claim's firing lost a run too, or its run is yet to
    come and acts then)."""
    if all(r.fate == CLAIMS for r in firing.runs):
        return False
    runs = [r for f in firings for r in f.live]

    def alike(silent: Run) -> bool:
        return any(
            c.route != silent.route
            and c.acted
            and c.seq < silent.seq
            and abs(c.at - silent.at) < REACH
            and not any(
                r.route == silent.route and r.seq < silent.seq and abs(r.at - c.at) < REACH
                for r in runs
            )
            for c in runs
        )

    return all(alike(r) for r in firing.live if not r.acted)


Firings.TestCase.settings = settings(
    max_examples=int(os.environ.get("MODEL_EXAMPLES", "600")),
    stateful_step_count=12,
    deadline=None,
    print_blob=True,
    database=None,
)
TestFirings = pytest.mark.slow(Firings.TestCase)
