"""The two registration routes agree on who runs: the plugin stands down (docs/install.md).

A harness can hold our registration twice: the plugin (Claude Code's or
Codex's, run from the plugin's own copy of this package) and the `install`
route (an entry in the harness's settings file running an installed
`lich-hook` by absolute path). Both would report every event, and on Claude
Code two agent-card hooks would answer one Agent call. So, for each event
(and, for PreToolUse, each tool), the plugin's hook does nothing when an
entry of ours in the harness's settings covers the same event and will run:
its `lich-hook` exists and is executable, its file does not switch hooks off,
and (Codex) its trust is current. Why that way round:

- the `install` route is the one a person chose by name, later, and its
  `lich-hook` is the one `doctor` and `install` run; a plugin copy can lag;
- the installed hook keeps its hot path untouched (it reads nothing more);
  only the plugin's hook, which knows it is the plugin, pays for a look at a
  few small settings files, and only inside lich;
- the rule reads only what the harness reads, so `doctor` (which calls
  `install_route_runs` too) says the same thing the hooks do.

Everything here is standard library and plain string work: it runs on a hook's
path. A settings entry this cheap reader cannot parse (an exotic quoting) is
simply not counted, so a doubt means two reports, never none.
"""

from __future__ import annotations

import os

from lich_hooks.base.harnesses import DEFAULT_PROVIDER
from lich_hooks.base.homes import claude_config_dir, codex_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    Trusted = Callable[[str, dict[str, object], dict[str, object], Mapping[str, str], str], bool]

EXECUTABLE_NAMES = ("lich-hook", "lich-hook.exe")
SETTINGS_READ_LIMIT = 4 << 20  # far above a real settings file; a runaway one is not read


def _claude_files(environ: Mapping[str, str], project: str) -> list[str]:
    return [
        os.path.join(claude_config_dir(environ), "settings.json"),
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
    ]


def _codex_files(environ: Mapping[str, str], project: str) -> list[str]:
    return [
        os.path.join(codex_home(environ), "hooks.json"),
        os.path.join(project, ".codex", "hooks.json"),
    ]


class InstallRoute:
    """Where a harness with a plugin route reads the `install` route's entries, the key
    that switches all of a file's hooks off, and what else it needs before it runs one
    (Codex: current trust)."""

    __slots__ = ("files", "off_switch", "trusted")

    def __init__(
        self,
        files: Callable[[Mapping[str, str], str], list[str]],
        off_switch: str | None = None,
        trusted: Trusted | None = None,
    ) -> None:
        self.files = files
        self.off_switch = off_switch
        self.trusted = trusted


def settings_files(provider: str, environ: Mapping[str, str], project: str) -> list[str]:
    """The files the `install` route writes (every scope) that this harness reads hooks from.

    The same list as the harness registry's `places()` (a test keeps them equal); the
    registry itself is not imported: it costs a hook several milliseconds.
    """
    route = INSTALL_ROUTES.get(provider)
    return route.files(environ, project) if route is not None else []


def command_argv(command: object) -> list[str] | None:
    """`[program, event, provider?]` of a `<…/lich-hook> <event> [<provider>]` command, else None.

    The program may be quoted as `install` writes it (shlex on POSIX, double
    quotes on Windows); anything more elaborate is not counted.
    """
    if not isinstance(command, str):
        return None
    text = command.strip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        if end < 0 or text[end + 1 : end + 2] not in (" ", "\t"):
            return None
        program, rest = text[1:end], text[end + 1 :]
    else:
        program, _, rest = text.partition(" ")
    words = rest.split()
    if os.path.basename(program) not in EXECUTABLE_NAMES or len(words) not in (1, 2):
        return None
    if not all(word.isascii() and word[0].isalpha() and _letters(word) for word in words):
        return None
    if words[0] == "status-line":
        return None
    return [program, *words]


def _letters(word: str) -> bool:
    return word.replace("-", "").replace("_", "").isalpha()


def runnable(program: str, environ: Mapping[str, str]) -> bool:
    """Would the harness's shell start this program: an executable file, by path or on PATH?"""
    if os.path.isabs(program):
        return os.path.isfile(program) and os.access(program, os.X_OK)
    if os.sep in program or (os.altsep and os.altsep in program):
        return False  # relative to whatever directory the harness runs in: not counted
    for folder in environ.get("PATH", "").split(os.pathsep):
        if folder and os.path.isabs(folder):
            candidate = os.path.join(folder, program)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return True
    return False


def covers(matcher: object, tool: str | None) -> bool:
    """Does a group's matcher let this tool's call through (Claude Code's matcher rules)?"""
    if tool is None or matcher is None or matcher in ("", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if matcher.replace("|", "").replace("_", "").isalnum():
        return tool in matcher.split("|")
    import re  # a regular-expression matcher: rare, and only on this path

    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


def _read(path: str) -> dict[str, object] | None:
    """A settings file's JSON object; None when absent, not a regular file, too big or not
    an object. Parsed with the payload's C scanner: `json` would import `re` and `enum`."""
    from lich_hooks.base import safefile
    from lich_hooks.base.payload import loads_object

    # Through the one safe-file layer, like install's reader: a settings file's
    # symlink is the user's (dotfile managers), a FIFO or a runaway file is not read.
    try:
        data = safefile.read_regular(path, SETTINGS_READ_LIMIT, follow=True)
    except (OSError, ValueError):
        return None
    return loads_object(data)


def entries(document: object, event: str) -> list[tuple[object, dict[str, object]]]:
    """(matcher, handler) of every handler under `hooks.<event>`."""
    hooks = document.get("hooks") if isinstance(document, dict) else None
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    found = []
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict):
                found.append((group.get("matcher"), handler))
    return found


def install_route_runs(
    provider: str,
    event: str,
    tool: str | None,
    environ: Mapping[str, str],
    project: str,
) -> str | None:
    """The settings file whose entry of ours runs `event` (for `tool`) here, or None.

    When it names a file, the plugin's hook for the same event stands down.
    """
    route = INSTALL_ROUTES.get(provider)
    if route is None:
        return None
    for path in route.files(environ, project):
        document = _read(path)
        if not isinstance(document, dict):
            continue
        if route.off_switch is not None and document.get(route.off_switch) is True:
            continue
        for matcher, handler in entries(document, event):
            argv = command_argv(handler.get("command"))
            if argv is None or not covers(matcher, tool):
                continue
            named = argv[2].lower() if len(argv) == 3 else DEFAULT_PROVIDER
            if named != provider or argv[1].replace("_", "").replace("-", "").lower() != (
                event.lower()
            ):
                continue
            if not runnable(argv[0], environ):
                continue
            if route.trusted is not None and not route.trusted(
                path, document, handler, environ, project
            ):
                continue
            return path
    return None


def _codex_runs(
    path: str,
    document: dict[str, object],
    handler: dict[str, object],
    environ: Mapping[str, str],
    project: str,
) -> bool:
    """Codex runs a hooks.json entry only once trusted with its current hash (codex_state.py).

    Read only when such an entry exists at all: both routes registered is rare.
    """
    try:
        from lich_hooks.human.settings import codex_state

        config = codex_state.Config.load(environ)
        if config.error is not None or config.hooks_off():
            return False
        in_project = os.path.dirname(os.path.abspath(path)) == os.path.join(
            os.path.abspath(project), ".codex"
        )
        if in_project and not config.project_trusted(project):
            return False
        verdicts = codex_state.judge_trust(
            config, os.path.abspath(path), document, lambda value: value is handler
        )
        return any(verdict.runs for verdict in verdicts)
    except Exception:  # in doubt the plugin reports too: two reports, never none
        return False


# provider -> its `install` route, for the harnesses that also ship a plugin route
# (registrations.PLUGIN_ROOT_VARIABLE names the same two).
INSTALL_ROUTES: dict[str, InstallRoute] = {
    "claude": InstallRoute(_claude_files, off_switch="disableAllHooks"),
    "codex": InstallRoute(_codex_files, trusted=_codex_runs),
}
