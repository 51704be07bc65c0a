"""Agent cards' PreToolUse entry point: not built yet; every call stays native."""

from __future__ import annotations

from lich_hooks.outcome import Context, Outcome


def run(ctx: Context) -> Outcome:
    return Outcome("not-built")
