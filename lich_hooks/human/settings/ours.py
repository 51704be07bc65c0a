"""Which entries of a harness's settings are ours, and the merge that puts ours in or takes them out
(docs/install.md). Ours by the command (commandline.py), never an extra key: Codex rejects unknown
keys and Antigravity drops them."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping

from lich_hooks.base.harnesses import DEFAULT_PROVIDER
from lich_hooks.human.settings import commandline, registrations
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.jsontext import walk


def this_executable() -> str:
    """This installation's `lich-hook` script: the one beside the running interpreter imports this
    package (never a shim on PATH); sys.executable is not resolved (a venv's python is a link)."""
    bin_dir = os.path.dirname(os.path.abspath(sys.executable))
    names = ("lich-hook.exe", "lich-hook") if sys.platform == "win32" else ("lich-hook",)
    for name in names:
        candidate = os.path.join(bin_dir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) in commandline.EXECUTABLE_NAMES and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    import sysconfig

    scripts = sysconfig.get_path("scripts")
    for name in names:
        candidate = os.path.join(scripts, name)
        if os.path.isfile(candidate):
            return candidate
    raise Refused(
        "cannot find this installation's lich-hook script next to "
        f"{sys.executable}; reinstall lich-hooks (pipx install <path or git URL of lich-hooks>)"
    )


def quote(path: str) -> str:
    """`path` as one word for the shell the harness runs commands with (what install prints)."""
    if sys.platform == "win32":
        return f'"{path}"' if (" " in path or "&" in path) else path
    return shlex.quote(path)


def split(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=sys.platform != "win32")
    except ValueError:
        return command.split()


def command_argv(value: object) -> list[str] | None:
    """`[program, event, provider?]` of a command of ours (a launcher's: its path), else None."""
    found = commandline.parse(value)
    return found.argv() if found is not None else None


def provider(command: str) -> str | None:
    """The provider one of our commands runs for (omitted means claude); None: not ours."""
    found = commandline.parse(command)
    if found is None:
        return None
    return found.provider.lower() if found.provider else DEFAULT_PROVIDER


def is_ours(handler: object) -> bool:
    return isinstance(handler, dict) and commandline.parse(handler.get("command")) is not None


def with_executable(
    value: object, executable: str, where: str | None = None, cmd: str | None = None
) -> object:
    """A registration whose commands run `executable`; `where`: the file it goes to; `cmd`: also a
    `command_windows` running that program per handler (docs/harnesses.md, Windows)."""
    if isinstance(value, dict):
        result: dict[str, object] = {}
        for key, item in value.items():
            found = commandline.parse(item) if key == "command" else None
            if found is not None:
                named = (found.provider or DEFAULT_PROVIDER).lower()
                result[key] = registrations.command(found.event, named, executable, where)
                if cmd is not None:
                    result["command_windows"] = registrations.windows_command(
                        found.event, named, cmd
                    )
            elif key != "command_windows" or not isinstance(value.get("command"), str):
                result[key] = with_executable(item, executable, where, cmd)
        return result
    if isinstance(value, list):
        return [with_executable(item, executable, where, cmd) for item in value]
    return value


def _strip(entries: list[object]) -> tuple[list[object], int | None]:
    """`entries` without our handlers, and the index where our first stood. An entry is a handler
    or a group `{matcher, hooks: […]}`; a group keeps only others' handlers, or goes when none."""
    kept: list[object] = []
    at: int | None = None
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
            handlers = entry["hooks"]
            theirs = [h for h in handlers if not is_ours(h)]
            if len(theirs) == len(handlers):
                kept.append(entry)
                continue
            if theirs:
                kept.append({**entry, "hooks": theirs})
            if at is None:
                at = len(kept)  # ours goes after a group we shared with someone
        elif is_ours(entry):
            if at is None:
                at = len(kept)
        else:
            kept.append(entry)
    return kept, at


def merge_events(
    events: dict[str, object], wanted: Mapping[str, object], where: str
) -> dict[str, object]:
    """`events` with ours replaced by `wanted` where ours stood (a re-run changes nothing, an
    upgrade keeps its place); new events are appended."""
    result: dict[str, object] = {}
    for name, entries in events.items():
        if not isinstance(entries, list):
            if name in wanted:
                raise Refused(f"{where}.{name} is not a list")
            result[name] = entries
            continue
        kept, at = _strip(entries)
        if name in wanted:
            ours = wanted[name]
            assert isinstance(ours, list)
            index = len(kept) if at is None else at
            result[name] = kept[:index] + list(ours) + kept[index:]
        elif kept or at is None:
            result[name] = kept
    for name, ours in wanted.items():
        if name not in events:
            result[name] = ours
    return result


def merge(document: object, want: dict[str, object], named_hook: str | None) -> dict[str, object]:
    """The settings document with ours replaced by `want` (with_executable's; empty: removed)."""
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise Refused("the file's top level is not a JSON object")
    if named_hook is not None:
        return _merge_named(document, want, named_hook)
    result = dict(document)
    hooks = document.get("hooks")
    wanted = want.get("hooks", {})
    assert isinstance(wanted, dict)
    if hooks is None:
        if wanted:
            result["hooks"] = dict(wanted)
        return result
    if not isinstance(hooks, dict):
        raise Refused('"hooks" is not a JSON object')
    merged = merge_events(hooks, wanted, "hooks")
    if merged or not hooks or wanted:
        result["hooks"] = merged
    else:
        del result["hooks"]  # only ours were there
    return result


def _merge_named(
    document: dict[str, object], want: dict[str, object], named: str
) -> dict[str, object]:
    """Named hooks: ours (`named`) replaced or removed whole, our handlers out of the others (each
    one's events as merge_events leaves them with nothing wanted)."""
    result: dict[str, object] = {}
    for name, hook in document.items():
        if name == named:
            if named in want:
                result[name] = want[named]
        elif not isinstance(hook, dict):
            result[name] = hook
        elif (cleaned := merge_events(hook, {}, name)) or not hook:
            result[name] = cleaned  # a hook that held only ours goes
    for name, hook in want.items():
        if name not in result:
            result[name] = hook
    return result


def our_commands(document: object) -> list[str]:
    """Every command of ours anywhere in a settings document."""
    found = []
    for value in walk(document):
        if isinstance(value, dict) and is_ours(value):
            command = value["command"]
            assert isinstance(command, str)
            found.append(command)
    return found
