"""Attribution under a shared process (docs/harnesses.md): one core, Codex's daemon, Crush's
server."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.hook.outcome import Context, Outcome


def card(ctx: Context) -> LichEnv | Outcome | Callable[[], LichEnv | Outcome] | None:
    """None: the hook's own card; a callable: the detached sender decides (Codex)."""
    from lich_hooks.base import harnesses as harness

    if ctx.route.shared == harness.CODEX_DAEMON:
        from lich_hooks.hook.shared import codex

        return codex.card(ctx)
    from lich_hooks.hook.shared import crush

    return crush.card(ctx)
