"""The one way a file we do not trust is read or written (docs/troubleshooting.md, "What lich-hook
writes"): no FIFO can hang us, no symlink is followed unless it is the user's own, reads are
bounded, writes atomic and private. Hook path: only `os` at top level."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
BINARY = getattr(os, "O_BINARY", 0)
AT = DIRECTORY != 0 and os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd  # POSIX

# st_mode's file type bits (the `stat` module's S_IFMT family, without importing it).
_IFMT = 0o170000
_IFREG = 0o100000
_IFDIR = 0o040000


def is_regular(mode: int) -> bool:
    return mode & _IFMT == _IFREG


def is_dir(mode: int) -> bool:
    return mode & _IFMT == _IFDIR


class NotRegular(OSError):
    """`kind` says what it is instead, for a person."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class TooLarge(OSError):
    """The file holds more than the caller's limit."""


def open_regular(
    path: str, *, follow: bool = False, dir_fd: int | None = None
) -> tuple[int, os.stat_result]:
    """A read-only descriptor and its fstat(); ELOOP for a symlink unless `follow`."""
    flags = os.O_RDONLY | NONBLOCK | CLOEXEC | BINARY | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= NOFOLLOW
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not is_regular(info.st_mode):
            # an fstat() is never of a symlink: one is refused (ELOOP) or followed by the open
            raise NotRegular("a directory" if is_dir(info.st_mode) else "a FIFO, socket or device")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_upto(fd: int, limit: int) -> bytes:
    """At most `limit` + 1 bytes (the extra one says "too large")."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_regular(
    path: str,
    limit: int,
    *,
    follow: bool = False,
    dir_fd: int | None = None,
) -> bytes:
    """TooLarge past `limit`; every refusal an OSError."""
    fd, _ = open_regular(path, follow=follow, dir_fd=dir_fd)
    try:
        data = read_upto(fd, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise TooLarge(path)
    return data


class Dir:
    """A descriptor where the platform has *at() calls, its path otherwise."""

    __slots__ = ("fd", "path")

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, path: str, follow: bool = False) -> Dir:
        """`path` itself may be a symlink to a directory only when `follow`."""
        return cls(path, _open_dir(path, None, follow))

    def at(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def sub(self, name: str, create: bool = False) -> Dir:
        """The directory `name` in this one, never through a symlink; made 0700 when `create`."""
        path = os.path.join(self.path, name)
        try:
            return Dir(path, _open_dir(self.at(name), self.fd))
        except FileNotFoundError:
            if not create:
                raise
        try:
            os.mkdir(self.at(name), 0o700, dir_fd=self.fd)
        except FileExistsError:
            pass
        return Dir(path, _open_dir(self.at(name), self.fd))

    def read(self, name: str, limit: int) -> bytes | None:
        try:
            return read_regular(self.at(name), limit, dir_fd=self.fd)
        except OSError:
            return None

    def write(
        self,
        name: str,
        data: bytes,
        mode: int = 0o600,
        prepare: Callable[[int], None] | None = None,
    ) -> None:
        """Atomic: a new O_EXCL file beside it (`prepare(fd)` may set its owner and mode), synced,
        renamed over it; the temporary never outlives a failure."""
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC | BINARY
        fd = os.open(self.at(tmp), flags, mode, dir_fd=self.fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if prepare is not None:
                    prepare(fd)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(self.at(tmp), self.at(name), src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            self.unlink(tmp)
            raise

    def create(self, name: str, data: bytes) -> bool:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC | BINARY
        try:
            fd = os.open(self.at(name), flags, 0o600, dir_fd=self.fd)
        except FileExistsError:
            return False
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        return True

    def publish(self, name: str, data: bytes) -> bool:
        """create(), but a reader sees no file or the whole of it (hard-linked in); OSError where
        the file system has no hard links."""
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
        if not self.create(tmp, data):
            raise FileExistsError(tmp)
        try:
            os.link(
                self.at(tmp),
                self.at(name),
                src_dir_fd=self.fd,
                dst_dir_fd=self.fd,
                follow_symlinks=False,
            )
        except FileExistsError:
            return False
        finally:
            self.unlink(tmp)
        return True

    def unlink(self, name: str) -> None:
        try:
            os.unlink(self.at(name), dir_fd=self.fd)
        except OSError:
            pass

    def rmdir(self, name: str) -> None:
        try:
            os.rmdir(self.at(name), dir_fd=self.fd)
        except OSError:
            pass

    def lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(self.at(name), dir_fd=self.fd, follow_symlinks=False)
        except OSError:
            return None

    def names(self, limit: int | None = None) -> list[str]:
        where = self.fd if self.fd is not None else self.path
        try:
            if limit is None:
                return os.listdir(where)
            with os.scandir(where) as scan:
                return [entry.name for _, entry in zip(range(limit), scan, strict=False)]
        except OSError:
            return []


def _open_dir(path: str, dir_fd: int | None, follow: bool = False) -> int | None:
    if not AT:
        if dir_fd is None and not follow and os.path.islink(path):
            raise NotADirectoryError(path)
        if not os.path.isdir(path):
            raise FileNotFoundError(path) if not os.path.lexists(path) else NotADirectoryError(path)
        return None
    flags = os.O_RDONLY | DIRECTORY | CLOEXEC | (0 if follow else NOFOLLOW)
    return os.open(path, flags, dir_fd=dir_fd)


def same_file(a: str, b: str) -> bool:
    """By identity; by resolved path when one cannot be stat-ed."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)
