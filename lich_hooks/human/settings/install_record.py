"""Which containers `install` created, per settings file, so `uninstall` puts back what it found
(docs/install.md); the file itself cannot say (Codex rejects unknown keys)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from lich_hooks.base.homes import file_key
from lich_hooks.hook import state

Path = tuple[str, ...]

INSTALLED = ("installed",)  # its row in hook/state/prune.py's RULES
RECORD_LIMIT = 1 << 16


def containers(document: object, depth: int = 2) -> dict[Path, type]:
    """Key paths (below the top level, down to `depth`) of every object and list."""
    found: dict[Path, type] = {}

    def visit(value: object, path: Path) -> None:
        if not isinstance(value, dict) or len(path) >= depth:
            return
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                below = (*path, key)
                found[below] = type(item)
                visit(item, below)

    visit(document, ())
    return found


def created(old: object, new: object) -> set[Path]:
    """The containers `new` has that `old` did not: what an install made."""
    before = containers(old)
    return {path for path in containers(new) if path not in before}


def restore(new: object, old: object, paths: set[Path]) -> object:
    """`new` with each container in `paths` that it lost put back empty, in its old place."""
    if not isinstance(new, dict) or not isinstance(old, dict):
        return new
    result: dict[str, object] = {}
    for key, value in old.items():
        below = {path[1:] for path in paths if len(path) > 1 and path[0] == key}
        if key in new:
            result[key] = restore(new[key], value, below) if below else new[key]
        elif (key,) in paths and isinstance(value, (dict, list)):
            result[key] = restore({} if isinstance(value, dict) else [], value, below)
    for key, value in new.items():
        if key not in result:
            result[key] = value
    return result


def read(environ: Mapping[str, str], path: str) -> set[Path] | None:
    """The containers install created in the settings file at `path`; None: no record."""
    raw = state.read(environ, INSTALLED, file_key(path), RECORD_LIMIT)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    paths = value.get("created") if isinstance(value, dict) and value.get("path") == path else None
    if not isinstance(paths, list):
        return None
    return {
        tuple(item)
        for item in paths
        if isinstance(item, list) and item and all(isinstance(part, str) for part in item)
    }


def write(environ: Mapping[str, str], path: str, made: set[Path]) -> None:
    """Best-effort: a state directory that refuses leaves uninstall its fallback rule."""
    data = json.dumps({"path": path, "created": sorted(list(item) for item in made)})
    try:
        state.write(environ, INSTALLED, file_key(path), data.encode("utf-8"))
    except OSError:
        pass


def forget(environ: Mapping[str, str], path: str) -> None:
    state.remove(environ, INSTALLED, file_key(path))
