"""opencode and omp: harnesses that load a module instead of running command hooks.

Neither has command hooks; both load JavaScript/TypeScript files from a
folder. The package ships one thin module for each (lich_hooks/modules/),
which only picks the moment and the id and runs this installation's
`lich-hook SessionStart <provider>` detached with `{"session_id": id}` on
stdin; every rule lives in Python (docs/harnesses.md, docs/session-start.md).

Here is everything about those files that is not I/O: where each harness
looks for them per scope, the text `install` writes (the template with the
absolute path of `lich-hook` put in), how a file of ours is recognised (its
first line, the marker), which `lich-hook` a module runs, and what an install
or uninstall would do to the file at that path, as a value; and `read`, the
one look at the disk that install and doctor share. The writing and printing
are in commands/install_modules.py, doctor's checks in commands/doctor/registrations.py.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from importlib import resources

from lich_hooks.settings.harnesses import home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# The first line of every module we write starts with this; nothing else is ours.
MARKER = "// lich-hooks module: "
PLACEHOLDER = "@LICH_HOOK@"
EVENT = "SessionStart"
SCOPES = ("user", "project")
_PATH_LINE = re.compile(r"^const LICH_HOOK(?:: string)? = (\".*\");?$", re.MULTILINE)
_ARGS_LINE = re.compile(r"^const ARGS = (\[.*\]);?$", re.MULTILINE)


class ModuleHarness:
    """One module harness: its provider id, its name, the file it loads, the template."""

    def __init__(self, key: str, title: str, template: str, file_name: str) -> None:
        self.key = key
        self.title = title
        self.template = template  # the file under lich_hooks/modules/
        self.file_name = file_name  # the name it is installed as

    def path(self, scope: str, environ: Mapping[str, str], project: str) -> str:
        """Where the harness loads the module from, for `scope` (docs/install.md)."""
        if self.key == "opencode":
            if scope == "project":
                return os.path.join(project, ".opencode", "plugins", self.file_name)
            return os.path.join(config_home(environ), "opencode", "plugins", self.file_name)
        if scope == "project":
            return os.path.join(project, ".omp", "extensions", self.file_name)
        return os.path.join(omp_agent_dir(environ), "extensions", self.file_name)


MODULES = {
    m.key: m
    for m in (
        ModuleHarness("opencode", "opencode", "opencode-plugin.js", "lich-hooks.js"),
        ModuleHarness("omp", "omp", "omp-extension.ts", "lich-hooks.ts"),
    )
}


def _absolute(value: str | None) -> str | None:
    """An environment path, only when absolute: a relative one is invalid, never cwd-based."""
    return value if value and os.path.isabs(value) else None


def config_home(environ: Mapping[str, str]) -> str:
    """$XDG_CONFIG_HOME (when absolute, as the XDG rules say), else ~/.config: opencode's."""
    return _absolute(environ.get("XDG_CONFIG_HOME")) or os.path.join(home(environ), ".config")


def omp_agent_dir(environ: Mapping[str, str]) -> str:
    """omp's agent folder: $PI_CODING_AGENT_DIR (when absolute), else ~/.omp/agent."""
    return _absolute(environ.get("PI_CODING_AGENT_DIR")) or os.path.join(
        home(environ), ".omp", "agent"
    )


def template(harness: ModuleHarness) -> str:
    return (resources.files("lich_hooks") / "modules" / harness.template).read_text("utf-8")


def render(harness: ModuleHarness, executable: str) -> str:
    """The module text that runs `executable` (a JSON string is a JavaScript string literal)."""
    text = template(harness)
    assert text.startswith(MARKER) and text.count(PLACEHOLDER) == 1
    return text.replace(PLACEHOLDER, json.dumps(executable))


def is_ours(text: str) -> bool:
    """A module file we wrote: its first line is our marker (any version of it)."""
    return text.startswith(MARKER)


def executable_of(text: str) -> str | None:
    """The absolute `lich-hook` path a module of ours runs, None when it names none."""
    match = _PATH_LINE.search(text)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def command_of(text: str) -> str | None:
    """The command a module runs, spelled as a registration would (`lich-hook <event> <provider>`).

    Read from the module's own `ARGS` line, so demo shows what the shipped file runs.
    """
    match = _ARGS_LINE.search(text)
    if match is None:
        return None
    try:
        args = json.loads(match.group(1))
    except ValueError:
        return None
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    return " ".join(["lich-hook", *args])


# --- what install and uninstall would do -------------------------------------------------

WRITE, REMOVE, NOTHING, REFUSE = "write", "remove", "nothing", "refuse"


class Plan:
    """What install/uninstall would do to one module file, decided before any write.

    `action` is WRITE (new or replaced text), REMOVE, NOTHING (already so) or
    REFUSE (`why` says what is in the way). `old_text` is None when no file is there.
    """

    def __init__(
        self,
        harness: ModuleHarness,
        scope: str,
        path: str,
        action: str,
        old_text: str | None,
        new_text: str | None,
        why: str = "",
    ) -> None:
        self.harness = harness
        self.scope = scope
        self.path = path
        self.action = action
        self.old_text = old_text
        self.new_text = new_text
        self.why = why

    @property
    def had_ours(self) -> bool:
        return self.old_text is not None and is_ours(self.old_text)

    def diff(self) -> str:
        old = (self.old_text or "").splitlines(keepends=True)
        new = (self.new_text or "").splitlines(keepends=True)
        before = self.path if self.old_text is not None else "/dev/null"
        after = self.path if self.new_text is not None else "/dev/null"
        lines = difflib.unified_diff(old, new, fromfile=before, tofile=after)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


class Found:
    """What is at a module path: kind `missing`, `file` (with its text) or `other`."""

    def __init__(self, kind: str, text: str | None = None, why: str = "") -> None:
        self.kind = kind
        self.text = text
        self.why = why


def plan_install(
    harness: ModuleHarness, scope: str, path: str, found: Found, executable: str
) -> Plan:
    new_text = render(harness, executable)
    if found.kind == "other":
        return Plan(harness, scope, path, REFUSE, None, None, found.why)
    if found.kind == "missing":
        return Plan(harness, scope, path, WRITE, None, new_text)
    assert found.text is not None
    if not is_ours(found.text):
        return Plan(
            harness,
            scope,
            path,
            REFUSE,
            found.text,
            None,
            f"{path} exists and was not written by lich-hook (no `{MARKER.strip()}` first "
            "line); move it aside and run this again",
        )
    if found.text == new_text:
        return Plan(harness, scope, path, NOTHING, found.text, new_text)
    return Plan(harness, scope, path, WRITE, found.text, new_text)


def plan_uninstall(harness: ModuleHarness, scope: str, path: str, found: Found) -> Plan:
    if found.kind == "missing":
        return Plan(harness, scope, path, NOTHING, None, None)
    if found.kind == "other" or found.text is None or not is_ours(found.text):
        why = found.why or f"{path} was not written by lich-hook: left as it is"
        return Plan(harness, scope, path, NOTHING, found.text, found.text, why)
    return Plan(harness, scope, path, REMOVE, found.text, None)


# The one look at the disk that install and doctor share.
READ_LIMIT = 1 << 20


def read(path: str) -> Found:
    """What is at `path`, without following a symlink or blocking on a FIFO."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return Found("missing")
    except OSError as error:
        return Found("other", why=f"cannot look at {path}: {error.strerror or error}")
    if stat.S_ISLNK(info.st_mode):
        return Found("other", why=f"{path} is a symlink: left as it is")
    if not stat.S_ISREG(info.st_mode):
        return Found("other", why=f"{path} is not a regular file: left as it is")
    from lich_hooks.settings import files
    from lich_hooks.settings.ours import Refused

    try:
        # Settings files' reader: O_NONBLOCK, and the regular-file check again on the
        # open file, so a FIFO swapped in after the lstat cannot block us either.
        data = files.read_bytes(path, READ_LIMIT)
    except Refused as error:
        return Found("other", why=str(error))
    if data is None:
        return Found("missing")
    try:
        return Found("file", data.decode("utf-8"))
    except UnicodeDecodeError:
        return Found("other", why=f"{path} is not UTF-8 text, so not ours: left as it is")
