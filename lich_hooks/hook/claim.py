"""Two routes, one act: of the runs the plugin's copy and an `install` entry make of one firing,
one acts, decided at run time (docs/install.md, "Both routes at once"). A claim the state directory
cannot hold counts as won: two reports, never none."""

from __future__ import annotations

import os
import time

from lich_hooks.base.harnesses import PLUGIN_ROUTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.base.safefile import Dir
    from lich_hooks.hook.outcome import Context
    from lich_hooks.hook.state import Where

PARTS = ("claims",)
# Both runs of one firing claim within ~0.1 s (tests/real_clients/test_firing_identity.py); the
# rest is room for a loaded machine. It bounds only how long a dead run's claim could silence one.
CLAIM_SECONDS = 5.0
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
) -> bool:
    """False: another route's run of this firing acts. `card`: when not the hook's own."""
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
        won = take(directory, label, route(), when)
    except OSError:
        return True
    finally:
        directory.close()
    state.WRITTEN.add((PARTS, label))
    ctx.log.set(claim="won" if won else "taken", claim_name=label, claim_at=round(when, 3))
    return won


def take(directory: Dir, label: str, mine: str, now: float) -> bool:
    """True to act (the model in tests/registrations/test_firings.py runs this function)."""
    record = f"{mine} {now!r}".encode()
    for generation in range(GENERATIONS):
        current = label if generation == 0 else f"{label}.{generation}"
        for _ in range(2):  # pruned between the two calls: that name once more
            if directory.publish(current, record):
                return True
            found = directory.read(current, RECORD_LIMIT)
            if found is not None:
                break
        else:
            return True
        owner, _, made = found.decode("ascii", "replace").partition(" ")
        try:
            age = now - float(made)
        except ValueError:
            continue  # not a record this protocol wrote
        # this route's claim, or one far apart in time (a clock jump): an earlier firing's
        if owner == mine or not -CLAIM_SECONDS < age < CLAIM_SECONDS:
            continue
        if directory.create(f"{current}-{mine}", b""):
            return False  # the other route's run of this firing acted
        # taken by this route's run of an earlier firing: that firing's claim
    return True


def stamp(value: object) -> str:
    """Two CRCs (hashlib's OpenSSL import costs several ms): enough to tell apart the few events
    within CLAIM_SECONDS; an adversary could only silence one of our own reports."""
    import zlib

    text = value if isinstance(value, str) else repr(value)
    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.crc32(data[::-1], 0x5BD1E995):08x}"
