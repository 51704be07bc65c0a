"""The per-user state directory: best-effort (a missing, read-only or corrupt directory
makes a hook forget, never fail); what it may touch: docs/troubleshooting.md ("What
lich-hook writes"). Writers note `WRITTEN`; prune.py's `after_run` prunes.
"""

from __future__ import annotations

import os

from lich_hooks.base.homes import state_dir
from lich_hooks.base.safefile import Dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    # The environ (the state directory opened per call), or its root already open.
    Where = Mapping[str, str] | Dir

# (directory parts, name) of every record this process wrote: the run that
# wrote a record never prunes it, whatever the clock says (state/prune.py).
WRITTEN: set[tuple[tuple[str, ...], str]] = set()


class Unusable(OSError):
    """The state directory exists but is not one lich-hooks may write into."""


def make_dirs(path: str) -> None:
    """Create `path` and its missing parents, one level at a time, each 0700; an existing
    directory keeps its mode and owner (a 0o277 umask is corrected only on ones made here).
    """
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
    """The state directory, opened (made when `create`); the path itself may be a symlink
    (the user's choice), nothing below it is followed.
    """
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
    """The directory `parts` (each a file_key) inside the state directory; `where`: the
    environ, or a root a run already opened (kept open so a job opens it once).
    """
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


def remove(where: Where, parts: tuple[str, ...], name: str) -> None:
    try:
        directory = open_dir(where, parts, create=False)
    except OSError:
        return
    try:
        directory.unlink(name)
    finally:
        directory.close()


def entries(
    environ: Mapping[str, str], parts: tuple[str, ...], since: float | None = None
) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every regular file in `parts` (dot files skipped); `since`: only
    those modified since (older ones are the pruner's).
    """
    try:
        directory = open_dir(environ, parts, create=False)
    except OSError:
        return
    try:
        for name in directory.names():
            if name.startswith("."):
                continue
            if since is not None:
                info = directory.lstat(name)
                if info is None or info.st_mtime < since:
                    continue
            data = directory.read(name, 1 << 16)
            if data is not None:
                yield name, data
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
