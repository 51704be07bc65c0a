"""The registration files this repository ships (docs/harnesses.md), as data.

One source for all of them: the files at the repository root are rendered from
here (`python -m lich_hooks.human.settings.registrations`), a test keeps them byte-identical,
and `demo` and `install` read the same data, so what we test is what users run.

Timeouts are seconds. The Agent/Task PreToolUse waits on `lich open`, whose
own limit is lich_process.OPEN_SECONDS (120 s), so its registration allows
more; every other hook is done in well under a second and gets a few seconds.
"""

from __future__ import annotations

import json
import os

from lich_hooks import __version__
from lich_hooks.base import commandline
from lich_hooks.base.errors import Refused
from lich_hooks.base.harnesses import PLUGIN_ROUTES, REGISTRATIONS

COMMAND = "lich-hook"
QUICK_TIMEOUT = 5
AGENT_TIMEOUT = 150
AGENT_MATCHER = "Agent|Task|TaskStop"
DESCRIPTION = "Reports sessions, worker answers and agent cards to lich."


# The plugin's copy of the package is the plugin (a marketplace entry's `source`,
# so Claude Code and Codex copy this folder, not the whole clone); its hooks start
# plugin/lich-hook there, which needs no pip install (docs/install.md).
PLUGIN_SOURCE = "./lich_hooks"
# provider -> the plugin's hooks file for it (under PLUGIN_SOURCE; demo runs it).
PLUGIN_HOOKS = {key: f"lich_hooks/plugin/{key}-hooks.json" for key in PLUGIN_ROUTES}


def command(event: str, provider: str, program: str = COMMAND, where: str | None = None) -> str:
    """The guarded command (base/commandline.py) running `program` for `event`; `where`:
    the settings file it is written to, named in the person's line when it cannot start."""
    row = REGISTRATIONS.get(provider)
    if row is None:  # no guard known for it: an unguarded command would break its sessions
        raise Refused(f"no registration for provider {provider!r} (base/harnesses.py)")
    message = row.missing(program, where) if row.says_on(event) else None
    return commandline.render(row.guard, program, event, provider, message)


def windows_command(event: str, provider: str, program: str, shell: str | None = None) -> str:
    """Codex's `command_windows` for the same registration, for the shell Codex runs it in
    there (`shell`, else this machine's: `codex_windows_shell`).

    cmd.exe cannot be handed a quoted path under Codex (base/commandline.py), so a path it
    cannot read as one word is written as its 8.3 short name, or where that is no better,
    as `lich-hook` on PATH.
    """
    if (shell or codex_windows_shell()) == commandline.POWERSHELL:
        return commandline.render(commandline.POWERSHELL, program, event, provider)
    return commandline.render(commandline.CMD, _cmd_word(program), event, provider)


# Where Codex 0.171 looks for PowerShell beside PATH (codex-rs/shell-command shell_detect.rs).
POWERSHELLS = (
    r"C:\Program Files\PowerShell\7\pwsh.exe",
    r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe",
)


def codex_windows_shell(path: str | None = None) -> str:
    """The shell Codex runs a hook's `command_windows` in on this machine: its session shell,
    PowerShell (`pwsh`, then `powershell`, on PATH or where it installs), else `cmd.exe`
    (docs/harnesses.md, Windows)."""
    import shutil

    found = any(shutil.which(name, path=path) for name in ("pwsh", "powershell"))
    if found or any(map(os.path.isfile, POWERSHELLS)):
        return commandline.POWERSHELL
    return commandline.CMD


def _cmd_word(program: str) -> str:
    """The program, else its folder's 8.3 name beside its own name (which commandline.parse
    knows), else `lich-hook` on PATH."""
    folder, name = os.path.split(program)
    short = _short_path(folder)
    for word in (program, short and os.path.join(short, name)):
        if word and commandline.cmd_word(word) is not None:
            return word
    return COMMAND


def _short_path(path: str) -> str | None:
    """Windows' 8.3 name for `path` (GetShortPathNameW); None off Windows or without one."""
    import sys

    if sys.platform != "win32":
        return None
    import ctypes

    try:
        function = ctypes.windll.kernel32.GetShortPathNameW  # type: ignore[attr-defined,unused-ignore]
        size = function(path, None, 0)
        if not size:
            return None
        buffer = ctypes.create_unicode_buffer(size)
        return str(buffer.value) if function(path, buffer, size) else None
    except (OSError, AttributeError):
        return None


def plugin_command(event: str, provider: str) -> str:
    """The same guard around the plugin's launcher, run by sh from the harness's plugin
    root (so a copy that lost its mode bits still runs)."""
    row = REGISTRATIONS[provider]
    assert row.plugin_root is not None
    message = row.plugin_missing() if row.says_on(event) else None
    return commandline.render(row.guard, COMMAND, event, provider, message, row.plugin_root)


def as_plugin(hooks: dict[str, object]) -> dict[str, object]:
    """The same registration with each command run from the plugin's own copy."""
    result: dict[str, object] = {}
    for event, groups in hooks.items():
        assert isinstance(groups, list)
        copied = []
        for group in groups:
            assert isinstance(group, dict)
            handlers = []
            for handler in group["hooks"]:
                found = commandline.parse(handler["command"])
                assert found is not None and found.provider is not None
                handlers.append({**handler, "command": plugin_command(found.event, found.provider)})
            copied.append({**group, "hooks": handlers})
        result[event] = copied
    return result


def group(event: str, provider: str, timeout: int, matcher: str | None = None) -> dict[str, object]:
    """One `{matcher?, hooks: [handler]}` group of Claude Code's shape (Codex's too)."""
    group: dict[str, object] = {}
    if matcher is not None:
        group["matcher"] = matcher
    group["hooks"] = [{"type": "command", "command": command(event, provider), "timeout": timeout}]
    return group


def claude_hooks() -> dict[str, object]:
    """Claude Code: the `hooks` object of a plugin's hooks/hooks.json or settings.json."""
    return {
        "SessionStart": [group("SessionStart", "claude", QUICK_TIMEOUT)],
        "Stop": [group("Stop", "claude", QUICK_TIMEOUT)],
        "PreToolUse": [group("PreToolUse", "claude", AGENT_TIMEOUT, matcher=AGENT_MATCHER)],
    }


# Codex names a hook by its statusMessage in /hooks and "Hooks need review" (else "Unnamed
# hook"), and shows it while the hook runs; it is part of the trust hash (Codex 0.171.0).
CODEX_STATUS_MESSAGE = "lich-hooks: report this session to lich"


def codex_hooks() -> dict[str, object]:
    """Codex: same shape as Claude Code's; only SessionStart has a job there."""
    handler = {
        "type": "command",
        "command": command("SessionStart", "codex"),
        "timeout": QUICK_TIMEOUT,
        "statusMessage": CODEX_STATUS_MESSAGE,
    }
    return {"SessionStart": [{"hooks": [handler]}]}


def crush_hooks() -> dict[str, object]:
    """Crush: flat entries; no matcher, so every tool call can carry the first report."""
    return {"PreToolUse": [{"command": command("PreToolUse", "crush"), "timeout": QUICK_TIMEOUT}]}


def antigravity_hooks() -> dict[str, object]:
    """Antigravity: one named hook; PreInvocation takes a flat list of handlers."""
    return {
        "lich": {
            "PreInvocation": [
                {
                    "type": "command",
                    "command": command("PreInvocation", "antigravity"),
                    "timeout": QUICK_TIMEOUT,
                }
            ]
        }
    }


def files() -> dict[str, object]:
    """Every registration file, by its path relative to the repository root."""
    plugin = {
        "name": "lich-hooks",
        "version": __version__,
        "description": DESCRIPTION,
        "author": {"name": "lich-hooks"},
        "license": "MIT",
    }
    return {
        "hooks/hooks.json": {"description": DESCRIPTION, "hooks": claude_hooks()},
        ".claude-plugin/plugin.json": plugin,
        ".claude-plugin/marketplace.json": {
            "name": "lich-hooks",
            "description": DESCRIPTION,  # `claude plugin validate --strict` requires one
            "owner": {"name": "lich-hooks"},
            "plugins": [
                {"name": "lich-hooks", "source": PLUGIN_SOURCE, "description": DESCRIPTION}
            ],
        },
        "codex-hooks.json": {"hooks": codex_hooks()},
        ".codex-plugin/plugin.json": {**plugin, "hooks": "./codex-hooks.json"},
        "crush-hooks.json": {"hooks": crush_hooks()},
        "hooks.json": antigravity_hooks(),
        # the plugin the marketplace installs: the package folder itself
        "lich_hooks/.claude-plugin/plugin.json": {**plugin, "hooks": "./plugin/claude-hooks.json"},
        PLUGIN_HOOKS["claude"]: {
            "description": DESCRIPTION,
            "hooks": as_plugin(claude_hooks()),
        },
        "lich_hooks/.codex-plugin/plugin.json": {**plugin, "hooks": "./plugin/codex-hooks.json"},
        PLUGIN_HOOKS["codex"]: {"hooks": as_plugin(codex_hooks())},
    }


def render(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write(root: str) -> list[str]:
    written = []
    for relative, value in files().items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        # newline="\n": the files are byte-identical to render() on every platform
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(render(value))
        written.append(relative)
    return written


if __name__ == "__main__":
    import sys

    for name in write(sys.argv[1] if len(sys.argv) > 1 else "."):
        print(name)
