"""Attribution under a shared process: one core (core.py), Codex's daemon and Crush's server.

`card(ctx)`: None (the hook's own card), another card's LichEnv, or the Outcome that refuses.
docs/harnesses.md explains both."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.hook.outcome import Context, Outcome


def card(ctx: Context) -> LichEnv | Outcome | None:
    """Who the report is for under the route's shared process (imported only here)."""
    from lich_hooks.base import harnesses as harness

    if ctx.route.shared == harness.CODEX_DAEMON:
        from lich_hooks.hook.shared import codex

        return codex.card(ctx)
    from lich_hooks.hook.shared import crush

    return crush.card(ctx)
