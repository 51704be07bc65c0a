"""Two routes, one act: of the runs the plugin's copy and an `install` entry make of one firing,
one acts, decided at run time (docs/install.md, "Both routes at once"). A claim the state directory
cannot hold counts as won: two reports, never none."""

from __future__ import annotations

import os
import time

from lich_hooks.base.harnesses import PLUGIN_ROUTES
from lich_hooks.base.homes import stamp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.base.safefile import Dir
    from lich_hooks.hook.outcome import Context
    from lich_hooks.hook.state import Where

PARTS = ("claims",)
# How far apart the two routes' runs of one firing claim, measured on Claude Code 2.1.332
# (tests/real_clients/test_firing_identity.py): 1-118 ms beside two or eight busy loops and a disk
# writer, 6-114 ms idle (40-260 ms on an earlier idle run). REACH leaves ~4x the largest: a claim
# of another route made within it may be this firing's other run's, one older is another firing's.
REACH = 1.0
# Later firings of one identity within the prune's hour, each under its own name.
GENERATIONS = 64
RECORD_LIMIT = 64


def name(ctx: Context, identity: str, card: str | None = None) -> str:
    return stamp("\0".join((ctx.provider, ctx.event, card or ctx.env.card or "", identity)))


def claims(ctx: Context) -> bool:
    return ctx.provider in PLUGIN_ROUTES


def route() -> str:
    """The copy of the package this run runs (a plugin's copy, a pipx venv…)."""
    return stamp(os.path.dirname(os.path.abspath(__file__)))


def claim(
    ctx: Context,
    identity: str | None,
    card: str | None = None,
    now: float | None = None,
    where: Where | None = None,
    once: bool = False,
) -> bool:
    """False: another run of this firing acts. `card`: when not the hook's own. `once`: the
    identity names one firing only (a tool call's id), so any claim before this one is its other
    run's, however late."""
    if not claims(ctx) or not identity:
        return True
    from lich_hooks.hook import state

    try:
        directory = state.open_dir(ctx.environ if where is None else where, PARTS, create=True)
    except OSError:
        return True
    label = name(ctx, identity, card)
    when = time.time() if now is None else now
    try:
        won = take(directory, label, route(), when, once)
    except OSError:
        return True
    finally:
        directory.close()
    state.WRITTEN.add((PARTS, label))
    ctx.log.set(claim="won" if won else "taken", claim_name=label, claim_at=round(when, 3))
    return won


def take(directory: Dir, label: str, mine: str, now: float, once: bool = False) -> bool:
    """True to act (the model in tests/registrations/test_firings.py runs this function)."""
    record = f"{mine} {now!r}".encode()
    if once:
        return directory.create(label, record)
    seen: list[tuple[str, str, float]] = []  # each claim of the identity: its name, route, time
    for generation in range(GENERATIONS):
        current = label if generation == 0 else f"{label}.{generation}"
        found = directory.read(current, RECORD_LIMIT)
        if found is None:  # the end of the claims: pair with one, or add this run's and act
            if _paired(directory, seen, mine, now):
                return False
            if directory.publish(current, record):
                return True
            found = directory.read(current, RECORD_LIMIT)  # another run's, published meanwhile
            if found is None:
                continue
        owner, _, made = found.decode("ascii", "replace").partition(" ")
        try:
            seen.append((current, owner, float(made)))
        except ValueError:
            continue  # not a record this protocol wrote
    return True


def _paired(directory: Dir, seen: list[tuple[str, str, float]], mine: str, now: float) -> bool:
    """Silent: a claim of another route within REACH that no other run of this route could be
    the other run of, its twin `<claim>-<route>` taken here (holding this run's time)."""
    for claimed, owner, made in seen:
        if owner == mine or not -REACH < now - made < REACH:
            continue
        if not _spoken_for(directory, seen, claimed, made, mine) and directory.create(
            f"{claimed}-{mine}", repr(now).encode()
        ):
            return True
    return False


def _spoken_for(
    directory: Dir, seen: list[tuple[str, str, float]], claimed: str, made: float, mine: str
) -> bool:
    """Another run of this route claimed within REACH of that claim (one that acted, or one that
    paired with another claim): it may be that firing's, so this run cannot tell, and acts (two
    reports, never none). This is what keeps a dead run's firing from passing its pairing on."""
    for other, owner, when in seen:
        # a twin holds a time within REACH of its claim's: none farther is read (its own claim's
        # twin this run's create tries)
        if other == claimed or not -2 * REACH < when - made < 2 * REACH:
            continue
        if owner == mine:
            if -REACH < when - made < REACH:
                return True
            continue
        twin = directory.read(f"{other}-{mine}", RECORD_LIMIT)
        if twin is None:
            continue
        try:
            if -REACH < float(twin) - made < REACH:
                return True
        except ValueError:
            return True  # being written: a run of this route pairing now
    return False
