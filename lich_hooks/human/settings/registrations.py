"""The registration files this repository ships (docs/harnesses.md), as data: the files at the
repository root are rendered from here (`python -m lich_hooks.human.settings.registrations`), a test
keeps them byte-identical, and demo and install read the same data. Timeouts are seconds: the
Agent/Task PreToolUse waits on `lich open` (lich_process.OPEN_SECONDS, 120 s)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from lich_hooks import __version__
from lich_hooks.base.harnesses import PLUGIN_ROUTES, REGISTRATIONS
from lich_hooks.human.settings import commandline
from lich_hooks.human.settings.errors import Refused

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
    """The guarded command (settings/commandline.py) running `program` for `event`; `where`:
    the settings file it is written to, named in the person's line when it cannot start."""
    row = REGISTRATIONS.get(provider)
    if row is None:  # no guard known for it: an unguarded command would break its sessions
        raise Refused(f"no registration for provider {provider!r} (base/harnesses.py)")
    message = missing(program, where) if says_on(row.guard, event) else None
    return commandline.render(row.guard, program, event, provider, message)


def says_on(guard: commandline.Guard, event: str) -> bool:
    """Does this event's command tell the person, once per session, that it cannot run?
    SessionStart runs once per conversation start; every other event stays silent."""
    return event == "SessionStart" and guard in (commandline.CARD, commandline.LOGIN)


def missing(program: str, where: str | None) -> str:
    """The person's line when `program` (an installed `lich-hook`) cannot start: true
    whether or not the plugin still reports, with the fix for each cause."""
    what = program if commandline.safe_message(program) else "lich-hook"
    fix = reinstall(program)
    if "/" not in program and "\\" not in program:
        what = "lich-hook (on PATH)"
        fix = f"put lich-hook on PATH (pipx ensurepath, then a new terminal), or {fix}"
    entry, gone = "a lich-hooks hook", "remove the lich-hook hooks from your settings"
    if where is not None and commandline.safe_message(where):
        entry += f" in {where}"
        gone = f"remove the lich-hook hooks from {where}"
    return (
        f"lich-hooks: {entry} runs {what}, which is missing or cannot start, so that "
        f"entry reports nothing to lich (the lich-hooks plugin, where installed, still "
        f"does). Fix: {fix}; or, if you uninstalled lich-hooks, {gone}. Then start a "
        f"new session."
    )


UNKNOWN_SOURCE = "<path or git URL of lich-hooks>"


def reinstall(program: str) -> str:
    """The command that makes an installed `lich-hook` start again where it exists but
    cannot (its venv's Python upgraded away): pipx's and uv's own reinstall, or the venv
    made again for pip (docs/install.md, "When the program cannot start")."""
    path = program.replace("\\", "/")
    if "/pipx/venvs/lich-hooks/" in path:
        return "pipx reinstall lich-hooks"
    venv = path.rsplit("/", 2)[0] if path.count("/") >= 2 else ""
    if not venv or not commandline.safe_message(venv) or "/" not in program:  # a PATH word
        return f"pipx reinstall lich-hooks (uv: uv tool install --reinstall {UNKNOWN_SOURCE})"
    source = install_source()
    if "/uv/tools/lich-hooks/" in path:
        return f"uv tool install --reinstall {source}"
    return f"python3 -m venv --clear {venv}, then {venv}/bin/python -m pip install {source}"


def install_source() -> str:
    """Where this installation came from (pip's direct_url.json): what a reinstall names."""
    try:
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
    return url if commandline.safe_message(url) else UNKNOWN_SOURCE


def windows_command(event: str, provider: str, program: str, shell: str | None = None) -> str:
    """Codex's `command_windows` for the same registration, for the shell Codex runs it in there
    (`shell`, else this machine's: `codex_windows_shell`).

    cmd.exe cannot be handed a quoted path under Codex (settings/commandline.py), so a path it
    cannot read as one word is written as its 8.3 short name, or where that is no better, as
    `lich-hook` on PATH."""
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
    message = None
    if says_on(row.guard, event):  # its plugin folder gone (a moved or deleted clone)
        message = (
            "lich-hooks cannot report this session to lich: the plugin folder "
            f"{row.title} runs it from is gone (a moved or deleted clone). Fix: "
            f"{row.plugin_fix}. Then start a new session."
        )
    return commandline.render(row.guard, COMMAND, event, provider, message, row.plugin_root)


# What a handler runs: command (the installed program's), or plugin_command (the plugin's copy)
Run = Callable[[str, str], str]


def handler(
    event: str, provider: str, timeout: int = QUICK_TIMEOUT, run: Run = command
) -> dict[str, object]:
    """One `{type, command, timeout}` command handler (Claude Code's, Codex's, Antigravity's)."""
    return {"type": "command", "command": run(event, provider), "timeout": timeout}


def group(
    event: str, provider: str, timeout: int, matcher: str | None = None, run: Run = command
) -> dict[str, object]:
    """One `{matcher?, hooks: [handler]}` group of Claude Code's shape (Codex's too)."""
    hooks = [handler(event, provider, timeout, run)]
    return {"hooks": hooks} if matcher is None else {"matcher": matcher, "hooks": hooks}


def claude_hooks(run: Run = command) -> dict[str, object]:
    """Claude Code: the `hooks` object of a plugin's hooks/hooks.json or settings.json."""
    return {
        "SessionStart": [group("SessionStart", "claude", QUICK_TIMEOUT, run=run)],
        "Stop": [group("Stop", "claude", QUICK_TIMEOUT, run=run)],
        "PreToolUse": [group("PreToolUse", "claude", AGENT_TIMEOUT, AGENT_MATCHER, run)],
    }


# Codex names a hook by its statusMessage in /hooks and "Hooks need review" (else "Unnamed
# hook"), and shows it while the hook runs; it is part of the trust hash (Codex 0.171.0).
CODEX_STATUS_MESSAGE = "lich-hooks: report this session to lich"


def codex_hooks(run: Run = command) -> dict[str, object]:
    """Codex: same shape as Claude Code's; only SessionStart has a job there."""
    named = {**handler("SessionStart", "codex", run=run), "statusMessage": CODEX_STATUS_MESSAGE}
    return {"SessionStart": [{"hooks": [named]}]}


def crush_hooks() -> dict[str, object]:
    """Crush: flat entries; no matcher, so every tool call can carry the first report."""
    return {"PreToolUse": [{"command": command("PreToolUse", "crush"), "timeout": QUICK_TIMEOUT}]}


def antigravity_hooks() -> dict[str, object]:
    """Antigravity: one named hook; PreInvocation takes a flat list of handlers."""
    return {"lich": {"PreInvocation": [handler("PreInvocation", "antigravity")]}}


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
            "hooks": claude_hooks(plugin_command),
        },
        "lich_hooks/.codex-plugin/plugin.json": {**plugin, "hooks": "./plugin/codex-hooks.json"},
        PLUGIN_HOOKS["codex"]: {"hooks": codex_hooks(plugin_command)},
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
