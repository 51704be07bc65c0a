"""The workers a card opened, one private file each in the state directory: what it holds,
why one file per worker, and how it is pruned is docs/agent-cards.md's "The worker
record, and TaskStop". Best-effort: a broken directory loses the record, never the verdict.
"""

from __future__ import annotations

from lich_hooks.base.homes import file_key
from lich_hooks.hook import state
from lich_hooks.hook.payload import loads_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypedDict

    class Worker(TypedDict):
        """What `add` writes for a worker lich took; read back as `dict[str, object]` (the file may
        be an older version's or damaged, so each field is checked where used).
        """

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
RECORD_LIMIT = 1 << 16
WORKERS = "workers"  # its row in state/prune.py's RULES (CHECKED spared)


def _parts(card: str) -> tuple[str, ...]:
    return (WORKERS, file_key(card))


def _name(name: str) -> str:
    return file_key(name) + SUFFIX


def add(environ: Mapping[str, str], card: str, worker: Worker) -> bool:
    """Remember a worker (its `name` is the key). False when the directory refused."""
    import json

    name = worker.get("name")
    if not isinstance(name, str) or not name:
        return False
    try:
        data = json.dumps(worker, ensure_ascii=True).encode("ascii")
        state.write(environ, _parts(card), _name(name), data)
    except (OSError, ValueError):
        return False
    return True


def _load(raw: bytes | None) -> dict[str, object] | None:
    if raw is None:
        return None
    worker = loads_object(raw)
    if worker is None or not isinstance(worker.get("name"), str):
        return None  # a corrupt file is no worker
    return worker


def find(environ: Mapping[str, str], card: str, name: str) -> dict[str, object] | None:
    """The worker recorded under roster name `name`, or None. One file read."""
    worker = _load(state.read(environ, _parts(card), _name(name), RECORD_LIMIT))
    return worker if worker is not None and worker.get("name") == name else None


def remove(environ: Mapping[str, str], card: str, name: str) -> None:
    state.remove(environ, _parts(card), _name(name))


def workers(
    environ: Mapping[str, str], card: str, now: float | None = None
) -> list[dict[str, object]]:
    """Every worker recorded for `card`, oldest first; with `now`, only those within the prune
    age (older ones cost a status line one lstat each, not a read).
    """
    since = None
    if now is not None:
        from lich_hooks.hook.state.prune import WORKERS_AGE

        since = now - WORKERS_AGE
    found = []
    for entry, raw in state.entries(environ, _parts(card), since):
        if not entry.endswith(SUFFIX):
            continue
        worker = _load(raw)
        if worker is not None:
            found.append(worker)
    found.sort(key=_when)
    return found


def _when(worker: dict[str, object]) -> float:
    value = worker.get("when")
    return float(value) if isinstance(value, (int, float)) else 0.0


def checked_at(environ: Mapping[str, str], card: str) -> float | None:
    """When lich's session list was last read for this card (wall clock), or None."""
    raw = state.read(environ, _parts(card), CHECKED, 64)
    if raw is None:
        return None
    try:
        return float(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None


def mark_checked(environ: Mapping[str, str], card: str, when: float) -> None:
    try:
        state.write(environ, _parts(card), CHECKED, repr(when).encode())
    except OSError:
        pass
