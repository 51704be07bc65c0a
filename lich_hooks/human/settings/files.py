"""A harness's settings file read and replaced without taking it over (docs/install.md,
"What `install` promises about your file")."""

from __future__ import annotations

import json
import os
import stat

from lich_hooks.base import safefile
from lich_hooks.human.settings.errors import Refused

SETTINGS_LIMIT = 16 << 20  # far above a real file (20,000 hooks: 1.6 MiB); a runaway is refused


def read_bytes(path: str, limit: int = SETTINGS_LIMIT) -> bytes | None:
    """Its bytes, None if it does not exist; Refused: not regular, over `limit`, unreadable."""
    try:
        return safefile.read_regular(path, limit, follow=True)
    except FileNotFoundError:
        return None
    except safefile.NotRegular as error:
        raise Refused(f"{path} is {error.kind}, not a settings file; nothing was changed") from None
    except safefile.TooLarge:
        raise Refused(f"{path} is larger than {limit >> 20} MiB; nothing was changed") from None
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None


def read_json(path: str, limit: int = SETTINGS_LIMIT) -> object:
    """The file's JSON value; None when it is missing, refused or not JSON."""
    try:
        data = read_bytes(path, limit)
        return None if data is None else json.loads(data)
    except (Refused, ValueError):
        return None


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


def replace(path: str, data: bytes, like: str | None = None) -> None:
    """Replace `path` atomically, keeping the owner, group and mode of `like` (default `path`;
    a new file: 0666 & ~umask). OSError when the directory refuses or the owner cannot be kept."""
    try:
        info: os.stat_result | None = os.stat(like or path)
    except FileNotFoundError:
        info = None
    directory = os.path.dirname(path)
    os.makedirs(directory or ".", exist_ok=True)

    def keep_owner_and_mode(fd: int) -> None:
        if os.name == "nt":
            return
        if info is None:
            mask = os.umask(0o022)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)
            return
        if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
            os.fchown(fd, info.st_uid, info.st_gid)
        os.fchmod(fd, stat.S_IMODE(info.st_mode))  # after the chown, which may clear set-id bits

    # A path-based Dir: the settings file's directory is the user's, and may be a symlink.
    safefile.Dir(directory or ".", None).write(
        os.path.basename(path), data, prepare=keep_owner_and_mode
    )
