"""Two routes, one act: of the runs two routes (the plugin's copy, an `install` entry) make of one
firing, one acts and the other stays silent, decided at run time since settings files cannot tell
whether the other will really run (docs/install.md, "Both routes at once": the rules and the
measured identities). Each claim silences at most one run of each other route, a route's own claims
never silence it, and a claim the state directory cannot hold counts as won: two reports, never
none."""

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
# Both runs of one firing claim within this of each other: Claude Code 2.1.332 starts
# matching hooks side by side, ~5-30 ms apart, and the plugin's launcher adds ~0.1 s
# (tests/real_clients/test_firing_identity.py); the rest is room for a loaded machine.
# A fresh claim of another route is only ever taken once, so a later firing within the
# window still acts: the window only bounds how long a run that died leaves a claim
# that could silence the next firing of the same identity.
CLAIM_SECONDS = 5.0
# Later firings of one identity within the prune's hour, each under its own name.
GENERATIONS = 64
RECORD_LIMIT = 64


def name(ctx: Context, identity: str, card: str | None = None) -> str:
    """The claim's file name: the same for both routes of one firing, nothing readable."""
    return stamp("\0".join((ctx.provider, ctx.event, card or ctx.env.card or "", identity)))


def claims(ctx: Context) -> bool:
    """Does this harness have a second route to claim events against?"""
    return ctx.provider in PLUGIN_ROUTES


def route() -> str:
    """This run's route: the copy of the package it runs (a plugin's copy, a pipx venv…)."""
    return stamp(os.path.dirname(os.path.abspath(__file__)))


def claim(
    ctx: Context,
    identity: str | None,
    card: str | None = None,
    now: float | None = None,
    where: Where | None = None,
) -> bool:
    """True: this run acts on the event. False: another route's run of this firing acts.

    Only harnesses with two routes claim; an event without an identity is not claimed. `card`: the
    card the run acts for, when it is not the hook's own (a shared process); `where`: the state
    directory a run already opened (state.open_dir)."""
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
    """The claim protocol on one directory (the model in tests/registrations/test_firings.py
    runs this function): True to act, False to stay silent."""
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
        # a claim of this route is an earlier firing's; one far apart in time, too (only
        # a clock that jumped puts the other run's claim after ours by that much)
        if owner == mine or not -CLAIM_SECONDS < age < CLAIM_SECONDS:
            continue
        if directory.create(f"{current}-{mine}", b""):
            return False  # the other route's run of this firing acted
        # taken by this route's run of an earlier firing: that firing's claim
    return True


def stamp(value: object) -> str:
    """A 64-bit digest of a value (two CRCs: `zlib` is built in, where `hashlib` costs a reporting
    hook several ms of OpenSSL import). It tells apart the few events fired within CLAIM_SECONDS; it
    guards nothing against an adversary, who could only make one of our own reports stay silent."""
    import zlib

    text = value if isinstance(value, str) else repr(value)
    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.crc32(data[::-1], 0x5BD1E995):08x}"
