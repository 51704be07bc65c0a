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
    from collections.abc import Callable, Mapping
    from typing import Literal

    from lich_hooks.base.commandline import Guard

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


# --- each script-hook harness's registration, as plain data --------------------------
#
# What the hook side and the human side both know about a harness that runs our
# registered command (docs/harnesses.md): the guard its shell evaluates
# (base/commandline.py), where its settings live per scope, the switch that turns all of
# a file's hooks off, its plugin root variable, and the person's line and fix a SessionStart
# prints when our program cannot start. The registry (human/settings/registry.py) adds
# behaviour; nothing here imports anything.

SCOPES = ("user", "project")


def _claude_settings(scope: str, environ: Mapping[str, str], project: str) -> str:
    import os

    from lich_hooks.base.homes import claude_config_dir

    if scope == "project":
        return os.path.join(project, ".claude", "settings.json")
    return os.path.join(claude_config_dir(environ), "settings.json")


def _codex_settings(scope: str, environ: Mapping[str, str], project: str) -> str:
    import os

    from lich_hooks.base.homes import codex_home

    if scope == "project":
        return os.path.join(project, ".codex", "hooks.json")
    return os.path.join(codex_home(environ), "hooks.json")


def _crush_settings(scope: str, environ: Mapping[str, str], project: str) -> str:
    import os
    import sys

    from lich_hooks.base.homes import settings_home

    if scope == "project":
        # Crush reads `.crush.json` before `crush.json`: edit the one in use.
        for name in (".crush.json", "crush.json"):
            candidate = os.path.join(project, name)
            if os.path.exists(candidate):
                return candidate
        return os.path.join(project, "crush.json")
    override = environ.get("CRUSH_GLOBAL_CONFIG")
    if override:
        return os.path.join(override, "crush.json")
    if sys.platform == "win32" and environ.get("LOCALAPPDATA"):
        return os.path.join(environ["LOCALAPPDATA"], "crush", "crush.json")
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(settings_home(environ), ".config")
    return os.path.join(base, "crush", "crush.json")


def _antigravity_settings(scope: str, environ: Mapping[str, str], project: str) -> str:
    import os

    from lich_hooks.base.homes import settings_home

    if scope == "project":
        return os.path.join(project, ".agents", "hooks.json")
    return os.path.join(settings_home(environ), ".gemini", "config", "hooks.json")


UNKNOWN_SOURCE = "<path or git URL of lich-hooks>"


def reinstall(program: str) -> str:
    """The command that makes an installed `lich-hook` start again where it exists but
    cannot (its venv's Python upgraded away): pipx's and uv's own reinstall, or the venv
    made again for pip (its old site-packages are another Python's). Read at install time
    (docs/install.md, "When the program cannot start")."""
    from lich_hooks.base.commandline import safe_message

    path = program.replace("\\", "/")
    if "/pipx/venvs/lich-hooks/" in path:
        return "pipx reinstall lich-hooks"
    venv = path.rsplit("/", 2)[0] if path.count("/") >= 2 else ""
    if not venv or not safe_message(venv) or "/" not in program:  # a PATH word: any machine's
        return f"pipx reinstall lich-hooks (uv: uv tool install --reinstall {UNKNOWN_SOURCE})"
    source = install_source()
    if "/uv/tools/lich-hooks/" in path:
        return f"uv tool install --reinstall {source}"
    return f"python3 -m venv --clear {venv}, then {venv}/bin/python -m pip install {source}"


def install_source() -> str:
    """Where this installation came from (pip's direct_url.json): what a reinstall names."""
    from lich_hooks.base.commandline import safe_message

    try:
        import json
        from importlib.metadata import distributions

        found = (d.read_text("direct_url.json") for d in distributions(name="lich-hooks"))
        data = json.loads(next(text for text in found if text))
        url = str(data["url"])
        if "vcs_info" in data:
            url = f"git+{url}"
        elif url.startswith("file://"):
            from urllib.parse import unquote

            url = unquote(url[len("file://") :])
    except Exception:  # installed from an index, or metadata unreadable
        return UNKNOWN_SOURCE
    return url if safe_message(url) else UNKNOWN_SOURCE


class Registration:
    """One script-hook harness's registration data (see the comment above)."""

    __slots__ = (
        "guard",
        "key",
        "off_switch",
        "plugin_fix",
        "plugin_root",
        "scrub",
        "settings",
        "title",
    )

    def __init__(
        self,
        key: str,
        title: str,
        guard: Guard,
        settings: Callable[[str, Mapping[str, str], str], str],
        off_switch: str | None = None,
        plugin_root: str | None = None,
        plugin_fix: str | None = None,
        scrub: str | None = None,
    ) -> None:
        self.key = key
        self.title = title
        # base/commandline.py: who evaluates the guard and what it lets through
        self.guard = guard
        # (scope, environ, project) -> the settings file `install --scope` writes
        self.settings = settings
        self.off_switch = off_switch
        self.plugin_root = plugin_root
        self.plugin_fix = plugin_fix
        # the harness's own switch that strips credential-like variables (LICH_TOKEN) from
        # the hook's environment (docs/transport.md, "A scrubbed token")
        self.scrub = scrub

    def says_on(self, event: str) -> bool:
        """Does this event's command tell the person, once per session, that it cannot run?

        SessionStart runs once per conversation start; the other events (every turn, every
        tool call) stay silent."""
        return event == "SessionStart" and self.guard in ("card", "login")

    def missing(self, program: str, where: str | None) -> str:
        """The person's line when `program` (an installed `lich-hook`) cannot start: true
        whether or not the plugin still reports, with the fix for each cause."""
        from lich_hooks.base.commandline import safe_message

        what = program if safe_message(program) else "lich-hook"
        fix = reinstall(program)
        if "/" not in program and "\\" not in program:
            what = "lich-hook (on PATH)"
            fix = f"put lich-hook on PATH (pipx ensurepath, then a new terminal), or {fix}"
        entry, gone = "a lich-hooks hook", "remove the lich-hook hooks from your settings"
        if where is not None and safe_message(where):
            entry += f" in {where}"
            gone = f"remove the lich-hook hooks from {where}"
        return (
            f"lich-hooks: {entry} runs {what}, which is missing or cannot start, so that "
            f"entry reports nothing to lich (the lich-hooks plugin, where installed, still "
            f"does). Fix: {fix}; or, if you uninstalled lich-hooks, {gone}. Then start a "
            f"new session."
        )

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

    def plugin_missing(self) -> str:
        """The person's line when the plugin's own folder is gone (a deleted clone)."""
        return (
            "lich-hooks cannot report this session to lich: the plugin folder "
            f"{self.title} runs it from is gone (a moved or deleted clone). Fix: "
            f"{self.plugin_fix}. Then start a new session."
        )


# provider -> its registration data; every script-hook harness install writes for.
REGISTRATIONS: dict[str, Registration] = {
    row.key: row
    for row in (
        Registration(
            "claude",
            "Claude Code",
            "card",
            _claude_settings,
            off_switch="disableAllHooks",
            plugin_root="CLAUDE_PLUGIN_ROOT",
            plugin_fix="claude plugin uninstall lich-hooks@lich-hooks, then add the marketplace "
            "from a current clone and install lich-hooks@lich-hooks again",
            scrub="CLAUDE_CODE_SUBPROCESS_ENV_SCRUB",
        ),
        Registration(
            "codex",
            "Codex",
            "login",
            _codex_settings,
            plugin_root="PLUGIN_ROOT",
            plugin_fix="codex plugin remove lich-hooks@lich-hooks, then add it again from a "
            "current clone",
        ),
        Registration("crush", "Crush", "server", _crush_settings),
        Registration("antigravity", "Antigravity", "answer", _antigravity_settings),
    )
}

# The harnesses with a plugin route beside the `install` route: where both can fire for
# one event, the hook claims it (hook/claim.py).
PLUGIN_ROUTES = tuple(key for key, row in REGISTRATIONS.items() if row.plugin_root)
