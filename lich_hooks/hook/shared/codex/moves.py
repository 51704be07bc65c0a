"""What the Codex attribution remembers between hooks: who may have moved where, whose is what.

A TUI can take its conversation into another card's directory with no trace
in its process (`/resume` of a session recorded there, "session directory",
then `/new`), and Codex fires no hook until a turn starts there. The only
traces are the session the daemon loads and what earlier hooks saw. So two
kinds of record, kept in `codex-daemon/` in the state directory:

- a *mark*: client `(pid, start)` may run a conversation in directory D. It is
  written when something happened in D that no report could pin on one
  client (a resume or fork there, or a session recorded there that the
  daemon holds and no report attributed), for every client connected then
  that could not run in D by its own cwd and argv. A marked client competes
  for D for as long as it stays connected.
- an *attribution*: session S was reported for client `(pid, start)`. A
  session the daemon holds whose client is still connected is accounted for.
  Once the daemon no longer holds S the attribution goes: if S is loaded
  again, someone resumed it.

Every record is an empty file whose name says everything (no file is read):
`m-<key of D>-<pid>-<start>` and `s-<key of S>-<pid>-<start>`, created with
O_EXCL|O_NOFOLLOW, 0600, in a 0700 directory (lich_hooks/hook/state/ opens it,
never through a symlink). Prune rule, whenever a record is written: a record
whose process is gone (no such pid, or a pid with another start time) is
removed, and so is an attribution of a session the daemon no longer holds;
so the directory holds a few records per running TUI and loaded session. More
than MAX_RECORDS names and the record counts as unreadable.
"""

from __future__ import annotations

from lich_hooks.base import procfs
from lich_hooks.hook import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    from lich_hooks.base.safefile import Dir

# Its row in state/prune.py's RULES never prunes by age or count: `prune` below
# removes a record once its process is gone, whenever one is written.
PARTS = ("codex-daemon",)
MAX_RECORDS = 1024
MARK = "m"
SESSION = "s"

Identity = tuple[int, int]


class Record:
    """The records read in one listing. `usable` False: the state directory cannot hold them."""

    __slots__ = ("names", "usable")

    def __init__(self, names: list[str], usable: bool = True) -> None:
        self.names = names
        self.usable = usable

    def marked(self, directory: str) -> set[Identity]:
        """The clients marked as possibly running a conversation in `directory`."""
        return _identities(self.names, f"{MARK}-{state.file_key(directory)}-")

    def attributed(self, session: str) -> set[Identity]:
        """The clients a report named for `session` (normally one)."""
        return _identities(self.names, f"{SESSION}-{state.file_key(session)}-")


def _identities(names: list[str], prefix: str) -> set[Identity]:
    found = set()
    for name in names:
        if name.startswith(prefix):
            parsed = _parse(name[len(prefix) :])
            if parsed is not None:
                found.add(parsed)
    return found


def _parse(tail: str) -> Identity | None:
    pid, sep, start = tail.partition("-")
    if sep and pid.isdigit() and start.isdigit() and pid.isascii() and start.isascii():
        return int(pid), int(start)
    return None


def load(environ: Mapping[str, str], create: bool = True) -> Record:
    """Every record's name (the directory is made if missing); unusable when it cannot be.

    `create=False` (doctor) reads only: a missing directory is an empty record.
    """
    try:
        directory = state.open_dir(environ, PARTS, create=create)
    except FileNotFoundError:
        return Record([], usable=not create)
    except OSError:
        return Record([], usable=False)
    try:
        names = [name for name in directory.names() if not name.startswith(".")]
    finally:
        directory.close()
    if len(names) > MAX_RECORDS:
        return Record([], usable=False)
    return Record(names)


def mark(
    environ: Mapping[str, str],
    where: str,
    clients: Iterable[Identity],
    loaded: Collection[str] | None = None,
) -> None:
    """Remember that these clients may run a conversation in `where` (best effort).

    `loaded`: the sessions the daemon holds now (see prune).
    """
    names = [f"{MARK}-{state.file_key(where)}-{pid}-{start}" for pid, start in clients]
    _create(environ, names, loaded)


def attribute(
    environ: Mapping[str, str],
    session: str,
    client: Identity,
    loaded: Collection[str] | None = None,
) -> None:
    """Remember that `session` was reported for `client` (best effort)."""
    pid, start = client
    held = None if loaded is None else {*loaded, session}
    _create(environ, [f"{SESSION}-{state.file_key(session)}-{pid}-{start}"], held)


def _create(
    environ: Mapping[str, str],
    names: list[str],
    loaded: Collection[str] | None,
    proc: str = "/proc",
) -> None:
    if not names:
        return
    try:
        directory = state.open_dir(environ, PARTS, create=True)
    except OSError:
        return
    try:
        present = set(directory.names())
        for name in names:
            if name not in present:
                directory.create(name, b"")
        prune(directory, proc, loaded)
    except OSError:
        pass
    finally:
        directory.close()


def alive(client: Identity, proc: str = "/proc") -> bool:
    pid, start = client
    return procfs.started(pid, proc) == start


def prune(directory: Dir, proc: str = "/proc", loaded: Collection[str] | None = None) -> int:
    """Remove the records of processes that are gone; how many went.

    With `loaded` (the sessions the daemon holds), also the attributions of
    sessions it no longer holds: a session it loads again later was resumed
    by someone, and must count as nobody's until a report says whose.
    """
    held = None if loaded is None else {state.file_key(sid) for sid in loaded}
    seen: dict[Identity, bool] = {}
    removed = 0
    for name in directory.names():
        kind, _, rest = name.partition("-")
        if kind not in (MARK, SESSION):
            continue
        key_and_pid, sep, start = rest.rpartition("-")
        key, sep2, pid = key_and_pid.rpartition("-")
        client = _parse(f"{pid}-{start}") if sep and sep2 else None
        if client is None:
            continue
        if kind == SESSION and held is not None and key not in held:
            directory.unlink(name)
            removed += 1
            continue
        if client not in seen:
            seen[client] = alive(client, proc)
        if not seen[client]:
            directory.unlink(name)
            removed += 1
    return removed
