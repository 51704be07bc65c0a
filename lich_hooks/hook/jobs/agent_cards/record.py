"""The workers a card opened, one file each (docs/agent-cards.md, "The worker record, and
TaskStop"); best-effort: a broken directory loses the record, never the verdict."""

from __future__ import annotations

from lich_hooks.base.homes import file_key
from lich_hooks.hook import state
from lich_hooks.hook.payload import loads_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypedDict

    class Worker(TypedDict):
        """Written by `add`, given back once `_valid` checked each field."""

        name: str  # lich's roster name: the file's key, and the TaskStop id
        label: str
        id: str | None  # lich's session id, when it gave one
        description: str
        branch: str | None  # None: shares the asking session's checkout
        path: str
        tool_use_id: str | None
        when: float  # wall clock at the open


SUFFIX = ".json"
CHECKED = ".checked"  # when the status line last asked lich (dot: never a worker's file)
WORKERS = "workers"  # its row in state/prune.py's RULES (CHECKED spared)
# What one status line reads at most, whatever the directory holds: entries, records (newest
# first), bytes each (more than `add` writes).
SCAN_LIMIT = 1000
READ_LIMIT = 200
RECORD_LIMIT = 8 << 10
DESCRIPTION_LIMIT = 256
_TEXT = ("name", "label", "description", "path")
_TEXT_OR_NONE = ("id", "branch", "tool_use_id")


def _parts(card: str) -> tuple[str, ...]:
    return (WORKERS, file_key(card))


def _name(name: str) -> str:
    return file_key(name) + SUFFIX


def add(environ: Mapping[str, str], card: str, worker: Worker) -> bool:
    """False when the directory refused."""
    import json

    name = worker.get("name")
    if not isinstance(name, str) or not name:
        return False
    worker = worker.copy()
    worker["description"] = worker["description"][:DESCRIPTION_LIMIT]
    try:
        data = json.dumps(worker, ensure_ascii=True).encode("ascii")
        if len(data) > RECORD_LIMIT:  # lich's own text past any reader's limit: not kept
            return False
        state.write(environ, _parts(card), _name(name), data)
    except (OSError, ValueError):
        return False
    return True


def _valid(raw: bytes | None) -> Worker | None:
    """None for a damaged or foreign file: no worker, and it never hides the others."""
    value = loads_object(raw) if raw is not None else None
    if value is None or not isinstance(value.get("name"), str) or not value["name"]:
        return None
    when = value.get("when")
    if isinstance(when, int) and not isinstance(when, bool) and 0 <= when < 1 << 53:
        when = float(when)  # an integer too large for a float is no time of ours
    if not isinstance(when, float) or not 0 <= when < float("inf"):  # NaN fails both
        return None
    if any(not isinstance(value.get(key, ""), str) for key in _TEXT):
        return None
    if any(not isinstance(value.get(key), (str, type(None))) for key in _TEXT_OR_NONE):
        return None
    value["when"] = when
    return value  # type: ignore[return-value]  # every field checked above


def find(environ: Mapping[str, str], card: str, name: str) -> Worker | None:
    worker = _valid(state.read(environ, _parts(card), _name(name), RECORD_LIMIT))
    return worker if worker is not None and worker["name"] == name else None


def remove(environ: Mapping[str, str], card: str, *names: str) -> None:
    state.remove(environ, _parts(card), *map(_name, names))


def workers(environ: Mapping[str, str], card: str, now: float) -> tuple[list[Worker], bool]:
    """The workers within the prune age, oldest first, and whether those are all of them."""
    from lich_hooks.hook.state.prune import WORKERS_AGE

    read, whole = state.entries(
        environ, _parts(card), now - WORKERS_AGE, RECORD_LIMIT, SCAN_LIMIT, READ_LIMIT
    )
    found = [w for entry, raw in read if entry.endswith(SUFFIX) and (w := _valid(raw)) is not None]
    found.sort(key=lambda worker: worker["when"])
    return found, whole


def checked_at(environ: Mapping[str, str], card: str) -> float | None:
    raw = state.read(environ, _parts(card), CHECKED, 64)
    if raw is None:
        return None
    try:
        when = float(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return when if 0 <= when < float("inf") else None


def mark_checked(environ: Mapping[str, str], card: str, when: float) -> None:
    try:
        state.write(environ, _parts(card), CHECKED, repr(when).encode())
    except OSError:
        pass
