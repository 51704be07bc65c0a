"""Reading and replacing a harness's settings file without taking it over.

The file is the user's (or the harness's): `install` and `uninstall` change
its content, never what it is. So, for `install`, `uninstall` and `doctor`:

- only a regular file is read (a symlink is followed: dotfile managers link
  settings files), checked before the open and opened O_NONBLOCK, so a FIFO
  or a device in its place is refused at once instead of hanging the command;
- every reader uses the same size limit, so a file `install` accepts is one
  `doctor` can read;
- the replacement is written next to it and renamed over it atomically, with
  the old file's owner, group and mode set on it first: root running
  `install` on a user's settings leaves them the user's;
- a file its owner made read-only (no owner write bit) is refused with a
  message saying so, unless the user passes --force.
"""

from __future__ import annotations

import os
import stat

from lich_hooks.settings.ours import Refused

# Far above any real settings file (a 20,000-hook file is about 1.6 MiB), low
# enough that a runaway file cannot make `install` or `doctor` eat the memory.
SETTINGS_LIMIT = 16 << 20


def read_bytes(path: str, limit: int = SETTINGS_LIMIT) -> bytes | None:
    """The file's bytes; None when it does not exist; Refused when it is not a
    regular file, is larger than `limit`, or cannot be read."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    _require_regular(path, info)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    try:
        _require_regular(path, os.fstat(fd))  # replaced between the check and the open
        chunks = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    finally:
        os.close(fd)
    if total > limit:
        raise Refused(f"{path} is larger than {limit >> 20} MiB; nothing was changed")
    return b"".join(chunks)


def _require_regular(path: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO, socket or device"
        raise Refused(f"{path} is {kind}, not a settings file; nothing was changed")


def check_writable(path: str, force: bool) -> None:
    """Refused when the existing file is read-only to its owner and not forced."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if os.name != "nt" and not info.st_mode & stat.S_IWUSR and not force:
        raise Refused(
            f"{path} is read-only (mode {stat.S_IMODE(info.st_mode):o}): its owner made it so; "
            "nothing was changed. Make it writable, or run this again with --force"
        )


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def replace(path: str, data: bytes, like: str | None = None) -> None:
    """Replace `path` with `data` atomically, keeping owner, group and mode.

    They are taken from `like` (default: `path` itself); a file that did not
    exist gets the usual 0666 & ~umask and the writer's owner. OSError when
    the directory refuses, or when the owner cannot be kept (then nothing
    changed).
    """
    try:
        info: os.stat_result | None = os.stat(like or path)
    except FileNotFoundError:
        info = None
    directory = os.path.dirname(path)
    os.makedirs(directory or ".", exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}")
    flags = (
        os.O_WRONLY
        | os.O_CREAT
        | os.O_EXCL
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_BINARY", 0)
    )
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if os.name != "nt":
                if info is None:
                    os.fchmod(fd, 0o666 & ~_umask())
                else:
                    if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                        os.fchown(fd, info.st_uid, info.st_gid)
                    # After the chown, which may clear set-id bits.
                    os.fchmod(fd, stat.S_IMODE(info.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
