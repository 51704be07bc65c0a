"""The harness registry: one entry per harness the human commands know (its file per scope, kind,
finder, next steps, demo's scenarios); install's choices, doctor's fix texts and demo's order are
read from HARNESSES. The hot path reads its own table (base/harnesses.py) without importing this;
tests/registrations/test_registry.py holds the two to each other. Every location comes from one
`environ` and one project folder, so tests and doctor can point every harness at a scratch home."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping

from lich_hooks.human.settings import discovery, registrations, scenarios
from lich_hooks.human.settings.folders import (
    claude_config_dir,
    codex_home,
    config_home,
    omp_agent_dir,
    settings_home,
)
from lich_hooks.human.settings.kinds import Harness, Locate, Scope
from lich_hooks.human.settings.module_file import ModuleHarness
from lich_hooks.human.settings.settings_file import SettingsHarness
from lich_hooks.human.settings.verified import Verified

Folder = Callable[[Mapping[str, str]], str]


def _scoped(folder: str, user: Folder, name: str) -> Locate:
    """`name` in the project's `folder` for `--scope project`, else in the `user(environ)` one."""

    def locate(scope: Scope, environ: Mapping[str, str], project: str) -> str:
        where = os.path.join(project, folder) if scope == "project" else user(environ)
        return os.path.join(where, name)

    return locate


def _crush_settings(scope: Scope, environ: Mapping[str, str], project: str) -> str:
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


def _under(base: Folder, *parts: str) -> Folder:
    return lambda environ: os.path.join(base(environ), *parts)


def _claude_also(environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
    return [("project local settings", os.path.join(project, ".claude", "settings.local.json"))]


def _crush_also(environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
    # Crush loads both; install edits only the first that exists.
    return [
        ("project settings", os.path.join(project, name)) for name in (".crush.json", "crush.json")
    ]


# --- what install prints next, per harness (the executable as the shell spells it) -----


def _says(*lines: str) -> Callable[[Scope, str], list[str]]:
    """Next steps that are the same for every scope and executable."""
    return lambda scope, exe: list(lines)


def _claude_next(scope: Scope, exe: str) -> list[str]:
    # json.dumps: the lines are pasted into settings.json, and a quoted path has quotes.
    status = json.dumps({"type": "command", "command": f"{exe} status-line"}, ensure_ascii=False)
    wrapped = json.dumps(f"{exe} status-line -- <your command>", ensure_ascii=False)
    return [
        "Next: start a new Claude Code session (or review them with /hooks).",
        "To show lich workers in the status line, add to the same file:",
        f'  "statusLine": {status}',
        f"  (with a status line command already there: {wrapped})",
    ]


def _codex_next(scope: Scope, exe: str) -> list[str]:
    steps = [
        "Next: Codex runs new or changed hooks only once you trust them: start codex and "
        'choose "Trust all and continue" when it shows "Hooks need review" (or run /hooks).',
        "Until then Codex skips them without a word; `lich-hook doctor` tells you which.",
    ]
    if scope == "project":
        steps.append("Project hooks load only when Codex trusts this project's .codex folder.")
    return steps


HARNESSES: dict[str, Harness] = {
    harness.key: harness
    for harness in (
        SettingsHarness(
            key="claude",
            title="Claude Code",
            locate=_scoped(".claude", claude_config_dir, "settings.json"),
            next_steps=_claude_next,
            scenarios=scenarios.claude,
            shipped_file="hooks/hooks.json",
            registration=lambda: {"hooks": registrations.claude_hooks()},
            also_reads=_claude_also,
            finds=discovery.claude_code,
            off_switch="disableAllHooks",
            plugin_remove="claude plugin uninstall {id}{scope}",
            plugin_add="`claude plugin marketplace add <clone or git URL>`, then "
            "`claude plugin install lich-hooks@lich-hooks`",
            slashes=True,
            verified=Verified(
                "claude", ("@anthropic-ai/claude-code",), "2.1.45", "2.1.332", runs_version=True
            ),
        ),
        SettingsHarness(
            key="codex",
            title="Codex",
            locate=_scoped(".codex", codex_home, "hooks.json"),
            next_steps=_codex_next,
            scenarios=scenarios.codex,
            shipped_file="codex-hooks.json",
            registration=lambda: {"hooks": registrations.codex_hooks()},
            finds=discovery.codex,
            plugin_remove="codex plugin remove {id}",
            plugin_add="`codex plugin marketplace add <clone>`, then "
            "`codex plugin add lich-hooks@lich-hooks`, then trust the hook",
            command_windows=True,
            verified=Verified("codex", ("@openai/codex",), "0.156.1", "0.171.0"),
        ),
        SettingsHarness(
            key="crush",
            title="Crush",
            locate=_crush_settings,
            next_steps=_says(
                "Next: restart Crush; the first tool call of each session reports it to lich."
            ),
            scenarios=scenarios.crush,
            shipped_file="crush-hooks.json",
            registration=lambda: {"hooks": registrations.crush_hooks()},
            jsonc=True,
            also_reads=_crush_also,
        ),
        SettingsHarness(
            key="antigravity",
            title="Antigravity",
            locate=_scoped(".agents", _under(settings_home, ".gemini", "config"), "hooks.json"),
            next_steps=_says(
                "Next: restart Antigravity (agy); its first model call in a lich card reports it.",
                "Antigravity ignores a hooks.json it cannot parse as a whole: keep it strict JSON.",
            ),
            scenarios=scenarios.antigravity,
            shipped_file="hooks.json",
            registration=registrations.antigravity_hooks,
            plugins=_under(settings_home, ".gemini", "antigravity-cli", "plugins"),
            finds=discovery.with_plugin_folder,
            named_hook="lich",
        ),
        ModuleHarness(
            key="opencode",
            title="opencode",
            locate=_scoped(".opencode", _under(config_home, "opencode"), "plugins"),
            next_steps=_says(
                "Next: start opencode in a lich card; a new session reports at once, a continued "
                "one (-c, -s, the session list) with its next message."
            ),
            scenarios=scenarios.opencode,
            template="opencode-plugin.js",
            file_name="lich-hooks.js",
            module_word="plugin",
            # opencode-ai, or its platform package (opencode-linux-x64, …) run directly
            verified=Verified("opencode", ("opencode",), "1.18.33", "1.18.33"),
        ),
        ModuleHarness(
            key="omp",
            title="omp",
            locate=_scoped(".omp", omp_agent_dir, "extensions"),
            next_steps=_says(
                "Next: start omp in a lich card; a new, resumed or forked session reports at once."
            ),
            scenarios=scenarios.omp,
            template="omp-extension.ts",
            file_name="lich-hooks.ts",
            module_word="extension",
            verified=Verified("omp", ("@oh-my-pi/pi-coding-agent",), "18.2.3", "18.2.3"),
        ),
    )
}

# The same entries by kind, for the code that needs one kind's own fields.
SETTINGS = {k: h for k, h in HARNESSES.items() if isinstance(h, SettingsHarness)}
MODULES = {k: h for k, h in HARNESSES.items() if isinstance(h, ModuleHarness)}


def discover(environ: Mapping[str, str], project: str, ask: bool = False) -> list[discovery.Found]:
    """Every existing settings or plugin file of every settings harness, each read once."""
    return discovery.discover(environ, project, SETTINGS.values(), ask)
