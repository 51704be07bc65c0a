"""The per-user state directory, best-effort: a missing, read-only or corrupt directory makes a hook
forget, never fail (docs/troubleshooting.md, "What lich-hook writes"). Nothing here prunes: a run
that wrote a record is noted in `WRITTEN` and calls prune.py's `after_run`."""

from __future__ import annotations

import os

from lich_hooks.base.homes import state_dir
from lich_hooks.base.safefile import Dir, is_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    # The environ (the state directory opened per call), or its root already open.
    Where = Mapping[str, str] | Dir

# (directory parts, name) of every record this process wrote: the run that
# wrote a record never prunes it, whatever the clock says (state/prune.py).
WRITTEN: set[tuple[tuple[str, ...], str]] = set()


class Unusable(OSError):
    """The state directory exists but is not one lich-hooks may write into."""


def make_dirs(path: str) -> None:
    """Create `path` and its missing parents, one level at a time, each 0700.

    Only directories this call creates are touched: an existing parent keeps its mode and owner,
    whatever they are. A umask that takes the owner's own bits away (0o277) is corrected on the
    directory just made, nothing else."""
    missing: list[str] = []
    current = path
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            continue  # someone (a parallel hook) made it first: not ours to change
        if os.name != "nt" and os.lstat(directory).st_mode & 0o7777 != 0o700:
            os.chmod(directory, 0o700)


def _check_root(root: Dir) -> None:
    """Only a directory of this user's that others cannot write into holds our state."""
    if os.name == "nt" or not hasattr(os, "geteuid"):
        return
    info = os.fstat(root.fd) if root.fd is not None else os.stat(root.path)
    if info.st_uid != os.geteuid() or info.st_mode & 0o002:
        raise Unusable(
            f"{root.path} is not a private directory of this user "
            f"(owner uid {info.st_uid}, mode {info.st_mode & 0o7777:o})"
        )


def open_root(environ: Mapping[str, str], create: bool) -> Dir:
    """The state directory, opened; made (with its missing parents) when `create`.

    The configured path itself may be a symlink to a directory (the user's own choice); everything
    below it is opened without following any."""
    path = state_dir(environ)
    if path is None:
        raise Unusable("no absolute HOME, XDG_STATE_HOME or LICH_HOOK_STATE_DIR")
    try:
        root = Dir.open(path, follow=True)
    except FileNotFoundError:
        if not create:
            raise
        make_dirs(path)
        root = Dir.open(path, follow=True)
    try:
        _check_root(root)
    except BaseException:
        root.close()
        raise
    return root


def open_dir(where: Where, parts: tuple[str, ...], create: bool) -> Dir:
    """The directory `parts` (at least one, each a file_key) inside the state directory.

    `where` is the environ (the state directory is opened, then closed once descended) or the root a
    run already opened, which stays open for its next call: a job that makes several calls opens the
    state directory once."""
    current = where if isinstance(where, Dir) else open_root(where, create)
    try:
        for part in parts:
            nested = current.sub(part, create)
            if current is not where:
                current.close()
            current = nested
    except BaseException:
        if current is not where:
            current.close()
        raise
    assert current is not where, "open_dir needs a directory below the root"
    return current


def read(where: Where, parts: tuple[str, ...], name: str, limit: int) -> bytes | None:
    """A record's bytes, or None when anything is missing, odd or unreadable."""
    try:
        directory = open_dir(where, parts, create=False)
    except OSError:
        return None
    try:
        return directory.read(name, limit)
    finally:
        directory.close()


def write(where: Where, parts: tuple[str, ...], name: str, data: bytes) -> None:
    """Write a record atomically (OSError when the directory refuses)."""
    directory = open_dir(where, parts, create=True)
    try:
        directory.write(name, data)
    finally:
        directory.close()
    WRITTEN.add((parts, name))


def remove(where: Where, parts: tuple[str, ...], *names: str) -> None:
    """Remove records, the directory opened once for all of them."""
    try:
        directory = open_dir(where, parts, create=False)
    except OSError:
        return
    try:
        for name in names:
            directory.unlink(name)
    finally:
        directory.close()


def entries(
    environ: Mapping[str, str],
    parts: tuple[str, ...],
    since: float,
    size: int,
    names: int,
    newest: int,
) -> tuple[list[tuple[str, bytes]], bool]:
    """(name, bytes) of the `newest` regular files modified at or after `since`, among the first
    `names` entries of the directory `parts` (dot files skipped), each at most `size` bytes (a
    larger one is left out); and whether nothing was left unread past those bounds.

    One lstat for each entry looked at, no read for the rest: records past their prune age are the
    pruner's, not a reader's, and the bounds hold whatever the directory holds."""
    try:
        directory = open_dir(environ, parts, create=False)
    except OSError:
        return [], True
    try:
        listed = directory.names(names + 1)
        whole = len(listed) <= names
        dated = []
        for name in listed[:names]:
            if name.startswith("."):
                continue
            info = directory.lstat(name)
            if info is not None and not is_dir(info.st_mode) and info.st_mtime >= since:
                dated.append((info.st_mtime, name))
        dated.sort(reverse=True)
        whole = whole and len(dated) <= newest
        found = []
        for _, name in dated[:newest]:
            data = directory.read(name, size)
            if data is not None:
                found.append((name, data))
        return found, whole
    finally:
        directory.close()


def probe(environ: Mapping[str, str]) -> None:
    """Make the state directory if needed and write and remove a file in it
    (doctor's check); OSError says why it cannot hold records."""
    root = open_root(environ, create=True)
    try:
        name = f".doctor-{os.getpid()}"
        root.write(name, b"ok")
        root.unlink(name)
    finally:
        root.close()
