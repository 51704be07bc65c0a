"""Attribution under a shared process (docs/harnesses.md): one core, Codex's daemon, Crush's
server."""

from __future__ import annotations

from lich_hooks.hook.shared.core import Card

__all__ = ["Card", "card"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.hook.outcome import Context


def card(ctx: Context) -> Card:
    """The route's harness folder answers (codex.card, crush.card); its answer becomes one Card."""
    from lich_hooks.base import harnesses as harness

    if ctx.route.shared == harness.CODEX_DAEMON:
        from lich_hooks.hook.shared import codex

        return codex.card(ctx)
    from lich_hooks.hook.outcome import Outcome
    from lich_hooks.hook.shared import crush

    found = crush.card(ctx)  # the hook's own card (None), a card found, or a refusal
    if found is None:  # a local Crush runs the hook: its guard skips what the mark says
        return Card(ctx.env, own=True, guard=lambda c, s: crush.guard_mark(ctx.environ, c, s))
    if isinstance(found, Outcome):
        return Card(refusal=found)
    return Card(found)
