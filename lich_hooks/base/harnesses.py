"""The hook side's harness table: provider ids, event spellings, and for each
(provider, event) the job it runs, whether that job reports only an id lich has
not taken yet, and what the harness must see on stdout when we have no verdict
(docs/architecture.md, docs/harnesses.md).

Everything here is plain data and string work so the no-op paths can consult it
without importing anything. The jobs are named, not imported: hook.run imports
a job's module only once the table says it runs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    JobName = Literal["session-start", "worker-answer", "agent-cards"]
    SharedName = Literal["codex-daemon", "crush-server"]

# The jobs (lich_hooks/hook/jobs/): hook.JOBS maps each name to its module's run().
SESSION_START: JobName = "session-start"
WORKER_ANSWER: JobName = "worker-answer"
AGENT_CARDS: JobName = "agent-cards"

# A harness that runs its hooks in one process shared by several cards: the
# hook's own LICH_* may be another card's, so the session-start job asks this
# attribution which card the report is for (session_start.ATTRIBUTIONS).
CODEX_DAEMON: SharedName = "codex-daemon"
CRUSH_SERVER: SharedName = "crush-server"


class Route:
    """What one (provider, event) registration runs."""

    __slots__ = ("deduped", "job", "shared")

    def __init__(self, job: JobName, deduped: bool = False, shared: SharedName | None = None):
        self.job = job
        # The event fires far more often than a conversation changes (every
        # model or tool call): report only an id lich has not yet taken for this card.
        self.deduped = deduped
        self.shared = shared


_SESSION = Route(SESSION_START)

# provider -> event -> Route. Every provider reports a SessionStart it is
# registered for; the rest is each harness's own (docs/harnesses.md). opencode
# and omp run `lich-hook SessionStart <provider>` from the thin module `install`
# writes for them (settings/modules.py); cursor and kiro are accepted so a
# hand-written registration still reports.
ROUTES: dict[str, dict[str, Route]] = {
    "claude": {
        "SessionStart": _SESSION,
        "Stop": Route(WORKER_ANSWER),
        "PreToolUse": Route(AGENT_CARDS),
    },
    "codex": {"SessionStart": Route(SESSION_START, shared=CODEX_DAEMON)},
    "antigravity": {"SessionStart": _SESSION, "PreInvocation": Route(SESSION_START, True)},
    "crush": {
        "SessionStart": _SESSION,
        "PreToolUse": Route(SESSION_START, True, shared=CRUSH_SERVER),
    },
    "opencode": {"SessionStart": _SESSION},
    "omp": {"SessionStart": _SESSION},
    "cursor": {"SessionStart": _SESSION},
    "kiro": {"SessionStart": _SESSION},
}

# Every provider id lich registers, in the table's order.
PROVIDERS = tuple(ROUTES)
DEFAULT_PROVIDER = "claude"

# provider -> event -> the bytes it must read when we have no verdict of our own.
# docs/harnesses.md: Antigravity reads stdout on every event it dispatches, and fails
# closed on PreToolUse (silence denies the tool), so it is the one harness that
# needs bytes even when we have nothing to say. Everyone else needs silence.
DEFAULT_STDOUT: dict[str, dict[str, bytes]] = {
    "antigravity": {
        "PreInvocation": b"{}",
        "PostInvocation": b"{}",
        "PostToolUse": b"{}",
        "PreToolUse": b'{"decision":"allow"}',
        "Stop": b'{"decision":""}',
    },
}

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
    return provider if provider in ROUTES else None


def route(provider: str, event: str) -> Route | None:
    """What a registration of `event` for `provider` runs; None: nothing (a no-op)."""
    routes = ROUTES.get(provider)
    return routes.get(event) if routes is not None else None


def default_stdout(provider: str | None, event: str | None) -> bytes:
    """What the harness must read when we have no verdict of our own."""
    if provider is None or event is None:
        return b""
    return DEFAULT_STDOUT.get(provider, {}).get(event, b"")
