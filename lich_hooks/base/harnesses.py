"""The hook side's harness table: provider ids, event spellings, and for each (provider, event) the
job it runs, whether that job reports only an id lich has not taken yet, and what the harness must
see on stdout when we have no verdict (docs/architecture.md, docs/harnesses.md).

Everything here is plain data and string work so the no-op paths can consult it without importing
anything. The jobs are named, not imported: hook.run imports a job's module only once the table says
it runs."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Literal

    # human/settings/commandline.py renders each
    Guard = Literal[
        "card",
        "server",
        "server-unmarked",
        "answer",
        "login",
        "powershell",
        "powershell-muted",
        "cmd",
    ]
    JobName = Literal["session-start", "worker-answer", "agent-cards"]
    SharedName = Literal["codex-daemon", "crush-server"]

# The jobs (lich_hooks/hook/jobs/): hook.JOBS maps each name to its module's run().
SESSION_START: JobName = "session-start"
WORKER_ANSWER: JobName = "worker-answer"
AGENT_CARDS: JobName = "agent-cards"

# A harness that runs its hooks in one process shared by several cards: the
# hook's own LICH_* may be another card's, so the session-start job asks this
# attribution which card the report is for (hook/shared: card()).
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

# provider -> event -> Route. Every provider reports a SessionStart it is registered for; the rest
# is each harness's own (docs/harnesses.md). opencode and omp run `lich-hook SessionStart
# <provider>` from the thin module `install` writes for them (settings/modules.py); cursor and kiro
# are accepted so a hand-written registration still reports.
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

    Harnesses and people write `SessionStart`, `sessionstart`, `session-start` or `session_start`;
    all of them name the same event."""
    return EVENTS.get(raw.replace("-", "").replace("_", "").lower())


def fold_provider(raw: str | None) -> str | None:
    """The provider id (lower-cased), the default when omitted, None when unknown."""
    if raw is None:
        return DEFAULT_PROVIDER
    provider = raw.lower()
    return provider if provider in ROUTES else None


def route(provider: str, event: str) -> Route | None:
    """What a registration of `event` for `provider` runs; None: nothing (a no-op)."""
    return ROUTES.get(provider, {}).get(event)


def default_stdout(provider: str | None, event: str | None) -> bytes:
    """What the harness must read when we have no verdict of our own."""
    return DEFAULT_STDOUT.get(provider or "", {}).get(event or "", b"")


class Registration:
    """What the hook side knows of one script-hook harness's registration: its guard (the form
    its shell evaluates: human/settings/commandline.py), its plugin root variable and the fix
    when that plugin's folder is gone (plugin/lich_hooks_boot.py), and its switch that strips
    LICH_TOKEN from a hook's environment (the session-start job tells the person). Where its
    settings live is the registry's (human/settings/registry.py)."""

    __slots__ = ("guard", "plugin_fix", "plugin_root", "scrub", "title")

    def __init__(
        self,
        title: str,
        guard: Guard,
        plugin_root: str | None = None,
        plugin_fix: str | None = None,
        scrub: str | None = None,
    ) -> None:
        self.title = title
        self.guard = guard
        self.plugin_root = plugin_root
        self.plugin_fix = plugin_fix
        self.scrub = scrub  # docs/transport.md, "A scrubbed token"

    def scrubbed(self, environ: Mapping[str, str]) -> str:
        """The person's line when the hook runs in a card whose LICH_TOKEN the harness took."""
        why, fix = self.scrub_said(environ)
        return (
            f"lich-hooks cannot report this session to lich: this card's LICH_TOKEN is "
            f"missing from {self.title}'s hooks ({why}). Fix: {fix}, then start a new session."
        )

    def scrub_said(self, environ: Mapping[str, str]) -> tuple[str, str]:
        """Why the token is gone and what brings it back (the line's and doctor's words).
        Claude Code 2.1.332 scrubs where its variable is on, or unset under GitHub Actions."""
        on = environ.get(self.scrub or "", "")
        if on:
            why = f"{self.scrub}={on} is set"
        elif environ.get("GITHUB_ACTIONS"):
            why = f"under GitHub Actions {self.scrub} is on unless set to 0"
        else:
            why = f"{self.scrub} is on in {self.title}'s settings"
        return (
            f"{why}: {self.title} strips credential-like variables from every subprocess",
            f"start {self.title} with {self.scrub}=0 in this card (and not set in the env "
            f"of its settings)",
        )


# provider -> its registration data; every script-hook harness install writes for.
REGISTRATIONS: dict[str, Registration] = {
    "claude": Registration(
        "Claude Code",
        "card",
        plugin_root="CLAUDE_PLUGIN_ROOT",
        plugin_fix="claude plugin uninstall lich-hooks@lich-hooks, then add the marketplace "
        "from a current clone and install lich-hooks@lich-hooks again",
        scrub="CLAUDE_CODE_SUBPROCESS_ENV_SCRUB",
    ),
    "codex": Registration(
        "Codex",
        "login",
        plugin_root="PLUGIN_ROOT",
        plugin_fix="codex plugin remove lich-hooks@lich-hooks, then add it again from a "
        "current clone",
    ),
    "crush": Registration("Crush", "server"),
    "antigravity": Registration("Antigravity", "answer"),
}

# The harnesses with a plugin route beside the `install` route: where both can fire for
# one event, the hook claims it (hook/claim.py).
PLUGIN_ROUTES = tuple(key for key, row in REGISTRATIONS.items() if row.plugin_root)
