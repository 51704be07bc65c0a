"""Two routes, one act: the first hook to claim an event acts, the other stays silent
(docs/install.md, "Both routes at once").

Claude Code and Codex can run our hook twice for one event: the plugin's copy and an
`install` entry (or two `install` scopes). Neither can tell from settings files whether the
other will really run (an entry whose `#!` interpreter is gone, one under a SessionStart
`"matcher": "startup"`, a disabled plugin), so each decides at run time: just before it
acts, a run creates a claim file named after the event's identity with O_EXCL; the run
that made it acts, a run that finds it made within CLAIM_SECONDS stays silent (no report,
no card, no verdict). Whatever state the other route is in, one run acts.

The identity is what both runs of one firing share and a later firing does not: the tool
call's `tool_use_id` (PreToolUse), the conversation and its `source` (SessionStart: /clear
and resume start a new one, compact repeats it within the card), the turn's answer (Stop).
A claim the state directory cannot hold counts as won: two reports, never none.
"""

from __future__ import annotations

import time

from lich_hooks.base.harnesses import PLUGIN_ROUTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.hook.outcome import Context
    from lich_hooks.hook.state import Where

PARTS = ("claims",)
# Both runs of one firing start together: Claude Code 2.1.45 and 2.1.332 start matching
# hooks side by side, within ~20 ms (tests/real_clients/test_two_hooks.py), the plugin's
# launcher a few tens of ms later. A claim older than this is an earlier firing's (a
# conversation resumed again in the same card reports again).
CLAIM_SECONDS = 10.0
# Later firings of one identity within the prune's hour, each under its own name.
GENERATIONS = 64


def name(ctx: Context, identity: str, card: str | None = None) -> str:
    """The claim's file name: the same for both routes of one firing, nothing readable."""
    return stamp("\0".join((ctx.provider, ctx.event, card or ctx.env.card or "", identity)))


def claims(ctx: Context) -> bool:
    """Does this harness have a second route to claim events against?"""
    return ctx.provider in PLUGIN_ROUTES


def claim(
    ctx: Context,
    identity: str | None,
    card: str | None = None,
    now: float | None = None,
    where: Where | None = None,
) -> bool:
    """True: this run acts on the event. False: the other route's run already claimed it.

    Only harnesses with two routes claim; an event without an identity is not claimed.
    `card`: the card the run acts for, when it is not the hook's own (a shared process);
    `where`: the state directory a run already opened (state.open_dir).
    """
    if not claims(ctx) or not identity:
        return True
    from lich_hooks.hook import state

    when = time.time() if now is None else now
    label = name(ctx, identity, card)
    try:
        directory = state.open_dir(ctx.environ if where is None else where, PARTS, create=True)
    except OSError:
        return True
    try:
        generation = 0
        while generation < GENERATIONS:
            # A claim is never moved or removed here (prune does that, an hour on): an
            # earlier firing's stale claim sends every run to the next generation's name,
            # where exactly one O_EXCL create succeeds.
            current = label if generation == 0 else f"{label}.{generation}"
            if directory.create(current, b""):
                state.WRITTEN.add((PARTS, current))
                ctx.log.set(claim="won")
                return True
            info = directory.lstat(current)
            if info is None:
                continue  # pruned between the two calls: try that name again
            # made by a run that started after ours (a later mtime) counts as fresh too;
            # only a clock that jumped far leaves one older or newer than the window
            if abs(when - info.st_mtime) < CLAIM_SECONDS:
                ctx.log.set(claim="taken")
                return False
            generation += 1
        return True
    except OSError:
        return True
    finally:
        directory.close()


def stamp(value: object) -> str:
    """A 64-bit digest of a value (two CRCs: `zlib` is built in, where `hashlib` costs a
    reporting hook several ms of OpenSSL import). It tells apart the few events fired
    within CLAIM_SECONDS; it guards nothing against an adversary, who could only make
    one of our own reports stay silent."""
    import zlib

    text = value if isinstance(value, str) else repr(value)
    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.crc32(data[::-1], 0x5BD1E995):08x}"
