"""Worker answer (SPEC §4): not built yet; a Stop is a no-op until it is."""

from __future__ import annotations

from lich_hooks.outcome import Context, Outcome


def run(ctx: Context) -> Outcome:
    return Outcome("not-built")
