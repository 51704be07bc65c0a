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

# (parts, name) of every record this run wrote: it never prunes them, whatever the clock says.
WRITTEN: set[tuple[tuple[str, ...], str]] = set()


class Unusable(OSError):
    """The state directory is not one lich-hooks may write into."""


def make_dirs(path: str) -> None:
    """Create `path` and its missing parents, each 0700 (despite a umask like 0o277); an existing
    parent keeps its mode and owner, whatever they are."""
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
    if os.name == "nt" or not hasattr(os, "geteuid"):
        return
    info = os.fstat(root.fd) if root.fd is not None else os.stat(root.path)
    if info.st_uid != os.geteuid() or info.st_mode & 0o002:
        raise Unusable(
            f"{root.path} is not a private directory of this user "
            f"(owner uid {info.st_uid}, mode {info.st_mode & 0o7777:o})"
        )


def open_root(environ: Mapping[str, str], create: bool) -> Dir:
    """The configured path may be a symlink (the user's choice); nothing below it is followed."""
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
    """The directory `parts` (each a file_key) inside the state directory; a root given as `where`
    stays open, so a job that makes several calls opens it once."""
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
    try:
        directory = open_dir(where, parts, create=False)
    except OSError:
        return None
    try:
        return directory.read(name, limit)
    finally:
        directory.close()


def write(where: Where, parts: tuple[str, ...], name: str, data: bytes) -> None:
    directory = open_dir(where, parts, create=True)
    try:
        directory.write(name, data)
    finally:
        directory.close()
    WRITTEN.add((parts, name))


def remove(where: Where, parts: tuple[str, ...], *names: str) -> None:
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
    """(name, bytes) of the `newest` regular files since `since` among the first `names` entries
    (each at most `size` bytes), and whether nothing was left unread past those bounds."""
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
    """doctor's check: OSError says why the state directory cannot hold records."""
    root = open_root(environ, create=True)
    try:
        name = f".doctor-{os.getpid()}"
        root.write(name, b"ok")
        root.unlink(name)
    finally:
        root.close()
