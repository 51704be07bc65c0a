"""The harness table: provider ids, event spellings, and what each harness must
see on stdout (docs/architecture.md, docs/harnesses.md).

Everything here is plain data and string work so the no-op paths can consult it
without importing anything.
"""

from __future__ import annotations

# Every provider id lich registers. The first four run script hooks; opencode
# and omp run `lich-hook SessionStart <provider>` from the thin module `install`
# writes for them (module_harnesses.py); cursor and kiro are accepted so a
# hand-written registration still reports.
PROVIDERS = ("claude", "codex", "antigravity", "crush", "opencode", "omp", "cursor", "kiro")
DEFAULT_PROVIDER = "claude"

# Canonical spellings of the events we know, keyed by their folded form.
EVENTS = {
    name.lower(): name
    for name in (
        "SessionStart",
        "SessionEnd",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "StopFailure",
        "SubagentStop",
        "UserPromptSubmit",
        "Notification",
        "PreCompact",
        "PreInvocation",
        "PostInvocation",
    )
}

# docs/harnesses.md: Antigravity reads stdout on every event it dispatches, and fails
# closed on PreToolUse (silence denies the tool), so it is the one harness that
# needs bytes even when we have nothing to say. Everyone else needs silence.
_ANTIGRAVITY_STDOUT = {
    "PreInvocation": b"{}",
    "PostInvocation": b"{}",
    "PostToolUse": b"{}",
    "PreToolUse": b'{"decision":"allow"}',
    "Stop": b'{"decision":""}',
}


def fold_event(raw: str) -> str | None:
    """The canonical event name for any accepted spelling, or None.

    Harnesses and people write `SessionStart`, `sessionstart`, `session-start`
    or `session_start`; all of them name the same event.
    """
    return EVENTS.get(raw.replace("-", "").replace("_", "").lower())


def fold_provider(raw: str | None) -> str | None:
    """The provider id (lower-cased), the default when omitted, None when unknown."""
    if raw is None:
        return DEFAULT_PROVIDER
    provider = raw.lower()
    return provider if provider in PROVIDERS else None


def default_stdout(provider: str | None, event: str | None) -> bytes:
    """What the harness must read when we have no verdict of our own."""
    if provider == "antigravity" and event is not None:
        return _ANTIGRAVITY_STDOUT.get(event, b"")
    return b""
