"""Refusals the detached sender decides after the hook has exited, kept so the person hears of
them: the next Codex SessionStart under the same daemon says them, once, and doctor lists them
(docs/harnesses.md, Codex). One small private file per conversation, written atomically, pruned
by age and count (its row in state/prune.py's RULES)."""

from __future__ import annotations

from lich_hooks.base.homes import file_key
from lich_hooks.hook import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PARTS = ("codex-refused",)
LIMIT = 4096  # one record
TOLD = ".told"  # a mark beside a record: its line was printed


def remember(environ: Mapping[str, str], daemon: str, thread: str, **record: object) -> None:
    """`record`: cwd, decision, cause, at (bounded: a cwd is the payload's)."""
    from lich_hooks.base.transport import encode

    record.update(daemon=daemon, thread=thread)
    data = encode({k: v[:1000] if isinstance(v, str) else v for k, v in record.items()})
    try:
        state.write(environ, PARTS, file_key(thread), data)
    except OSError:
        pass  # best-effort: the run log has it


def recent(environ: Mapping[str, str], daemon: str) -> list[tuple[dict[str, object], bool]]:
    """This daemon's records, newest first, each with whether its line was printed."""
    from lich_hooks.hook.payload import loads_object

    found, _ = state.entries(environ, PARTS, 0.0, LIMIT, 1000, 40)
    told = {name.removesuffix(TOLD) for name, _ in found if name.endswith(TOLD)}
    records = [(name, loads_object(data)) for name, data in found]
    return [({**r, "name": n}, n in told) for n, r in records if r and r.get("daemon") == daemon]


def untold(environ: Mapping[str, str], daemon: str) -> list[dict[str, object]]:
    """This daemon's records nobody was told of, each marked here first (O_EXCL): a run reading
    it at the same moment does not tell it again."""
    records = [record for record, told in recent(environ, daemon) if not told]
    try:
        directory = state.open_dir(environ, PARTS, create=False) if records else None
    except OSError:
        return []
    try:
        return [r for r in records if directory and directory.create(f"{r['name']}{TOLD}", b"")]
    except OSError:
        return []
    finally:
        if directory is not None:
            directory.close()
