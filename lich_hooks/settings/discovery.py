"""Find every registration of ours a harness could run: its settings files and plugins.

`doctor` judges what this finds; `install` uses it to warn about a second
registration (every event would run twice). One walk serves both, so the two
can never disagree about where a harness looks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from lich_hooks.settings import jsontext, ours
from lich_hooks.settings.harnesses import HARNESSES, Harness

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PLUGIN_SCAN_DEPTH = 7
PLUGIN_FILE_NAMES = ("hooks.json", "codex-hooks.json", "crush-hooks.json")
READ_LIMIT = 1 << 20


@dataclass(frozen=True)
class Found:
    """One settings or plugin file a harness reads, and what of ours is in it."""

    harness: Harness
    label: str  # "user settings", "project local settings", "plugin", …
    path: str  # as the harness names it
    document: object  # the parsed value; None when it did not parse
    error: str | None  # why it could not be read or parsed
    commands: tuple[str, ...]  # our commands in it, for this harness

    @property
    def plugin(self) -> bool:
        return self.label == "plugin"


def read_document(path: str, jsonc: bool) -> object:
    """A JSON(C) file's value; a JsonTextError saying why it could not be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(READ_LIMIT)
        parsed = jsontext.parse(data.decode("utf-8"), jsonc=jsonc)
    except (OSError, UnicodeDecodeError) as error:
        raise jsontext.JsonTextError(str(error)) from None
    return parsed.root.value if parsed.root else None


def plugin_files(root: str) -> list[str]:
    found = []
    base_depth = root.rstrip(os.sep).count(os.sep)
    for directory, subdirs, files in os.walk(root):
        if directory.count(os.sep) - base_depth >= PLUGIN_SCAN_DEPTH:
            subdirs[:] = []
        subdirs[:] = [d for d in subdirs if d not in (".git", "node_modules")]
        for name in files:
            if name in PLUGIN_FILE_NAMES:
                found.append(os.path.join(directory, name))
    return sorted(found)


def commands_in(document: object, harness: Harness, plugin: bool) -> list[str]:
    """Our commands in one of this harness's settings or plugin files.

    A plugin folder is a clone of this repository, holding every harness's
    registration file: only the commands for this harness's provider in it are
    this harness's registration.
    """
    found = ours.our_commands(document)
    if not plugin:
        return found
    return [command for command in found if ours.provider(command) == harness.key]


def _places(environ: Mapping[str, str], project: str) -> list[tuple[Harness, str, str]]:
    places = [
        (harness, label, path)
        for harness in HARNESSES.values()
        for label, path in harness.places(environ, project)
    ]
    for harness in HARNESSES.values():
        root = harness.plugins(environ) if harness.plugins else None
        if root and os.path.isdir(root):
            places.extend((harness, "plugin", path) for path in plugin_files(root))
    return places


def discover(environ: Mapping[str, str], project: str) -> list[Found]:
    """Every existing settings or plugin file of every harness, each read once.

    The project may be the home: a file both scopes name is listed once.
    """
    found: list[Found] = []
    seen: set[str] = set()
    for harness, label, path in _places(environ, project):
        real = os.path.realpath(path)
        if real in seen or not os.path.isfile(path):
            continue
        seen.add(real)
        plugin = label == "plugin"
        try:
            document = read_document(path, jsonc=harness.jsonc or plugin)
        except jsontext.JsonTextError as error:
            found.append(Found(harness, label, path, None, str(error), ()))
            continue
        commands = tuple(commands_in(document, harness, plugin))
        found.append(Found(harness, label, path, document, None, commands))
    return found


def registered_in(harness_key: str, environ: Mapping[str, str], project: str) -> list[str]:
    """Every settings or plugin file of this harness that runs one of our commands."""
    return [
        os.path.realpath(item.path)
        for item in discover(environ, project)
        if item.harness.key == harness_key and item.commands
    ]
