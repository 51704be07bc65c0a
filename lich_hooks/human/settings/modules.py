"""The module files opencode and omp load (lich_hooks/modules/; docs/harnesses.md): the text install
writes, how one of ours is told apart (its first line), and which command it runs."""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from lich_hooks.human.settings import files
from lich_hooks.human.settings.errors import Refused

FoundKind = Literal["missing", "file", "other"]

# The first line of every module we write starts with this; nothing else is ours.
MARKER = "// lich-hooks module: "
PLACEHOLDER = "@LICH_HOOK@"
EVENT = "SessionStart"
_PATH_LINE = re.compile(r"^const LICH_HOOK(?:: string)? = (\".*\");?$", re.MULTILINE)
_ARGS_LINE = re.compile(r"^const ARGS = (\[.*\]);?$", re.MULTILINE)


def template(name: str) -> str:
    """The text of lich_hooks/modules/`name` (a registry entry's `template`)."""
    return (resources.files("lich_hooks") / "modules" / name).read_text("utf-8")


def render(name: str, executable: str) -> str:
    """The module text that runs `executable` (a JSON string is a JavaScript string literal)."""
    text = template(name)
    assert text.startswith(MARKER) and text.count(PLACEHOLDER) == 1
    return text.replace(PLACEHOLDER, json.dumps(executable))


def is_ours(text: str) -> bool:
    """A module file we wrote: its first line is our marker (any version of it)."""
    return text.startswith(MARKER)


def _literal(line: re.Pattern[str], text: str) -> object:
    """The JSON value one of a module's `const` lines holds; None: no such line, or not JSON."""
    match = line.search(text)
    if match is None:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def executable_of(text: str) -> str | None:
    """The absolute `lich-hook` path a module of ours runs, None when it names none."""
    value = _literal(_PATH_LINE, text)
    return value if isinstance(value, str) else None


def command_of(text: str) -> str | None:
    """The command a module runs, read from its own `ARGS` line (demo shows what ships)."""
    args = _literal(_ARGS_LINE, text)
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    return " ".join(["lich-hook", *args])


@dataclass(eq=False)
class Found:
    """What is at a module path: kind `missing`, `file` (with its text) or `other`."""

    kind: FoundKind
    text: str | None = None
    why: str = ""


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
    try:
        # O_NONBLOCK and the regular-file check on the open file: a FIFO swapped in cannot block
        data = files.read_bytes(path, READ_LIMIT)
    except Refused as error:
        return Found("other", why=str(error))
    if data is None:
        return Found("missing")
    try:
        return Found("file", data.decode("utf-8"))
    except UnicodeDecodeError:
        return Found("other", why=f"{path} is not UTF-8 text, so not ours: left as it is")
