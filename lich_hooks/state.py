"""The per-user state directory: small private files, written atomically.

Holds what must outlive one hook process: the id each card last reported
(SPEC §3, Antigravity and Crush) and the worker record (SPEC §6.4). Everything
here is best-effort: a missing, read-only or corrupt directory makes a hook
forget, never fail (SPEC §9).

The platform directory is computed here rather than with platformdirs: the
Crush and Antigravity no-op paths read this file on every tool or model call,
and importing platformdirs costs more than those paths' whole budget.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

APP = "lich-hooks"


def state_dir(environ: Mapping[str, str]) -> str:
    """$LICH_HOOK_STATE_DIR, else the platform's per-user state directory."""
    override = environ.get("LICH_HOOK_STATE_DIR")
    if override:
        return override
    home = environ.get("HOME") or os.path.expanduser("~")
    if sys.platform == "win32":
        base = environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, APP)
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", APP)
    base = environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    return os.path.join(base, APP)


def file_key(text: str) -> str:
    """A file name for an arbitrary id (a lich card id) that cannot escape the directory."""
    safe = "".join(c if (c.isascii() and (c.isalnum() or c in "-_")) else "_" for c in text)
    if safe == text and 0 < len(text) <= 100:
        return text
    import hashlib

    return safe[:40] + "-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def ensure_dir(path: str) -> None:
    """Create `path` private to the user, with any missing parents; tighten it if it exists.

    os.makedirs gives the parents it creates the umask's mode, so the state
    root under `reported/` or `workers/` would come out world-readable: every
    directory created here is made 0700 instead.
    """
    if not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent and parent != path:
            ensure_dir(parent)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    if os.name != "nt":
        mode = os.stat(path).st_mode & 0o777
        if mode & 0o077:
            # Only take group and other bits away: a directory the user made
            # read-only stays read-only (the write that follows then fails, and
            # the record is best-effort).
            os.chmod(path, mode & 0o700)


def read_bytes(path: str, limit: int = 1 << 20) -> bytes | None:
    """The file's bytes, or None when it is missing, unreadable or oversized."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def write_atomic(path: str, data: bytes, mode: int = 0o600, private_dir: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old file or the new one, never half.

    The temporary file is created 0600 with O_EXCL in the same directory, given
    its final `mode`, then renamed over the target: rename is atomic on every
    platform we run on. State files keep 0600 in a private directory; a
    harness's settings file (`install`) keeps its own mode and directory.
    """
    directory = os.path.dirname(path)
    if private_dir:
        ensure_dir(directory)
    else:
        os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode != 0o600:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# --- the last id each card reported (SPEC §3) -----------------------------------


def _reported_path(environ: Mapping[str, str], card: str) -> str:
    return os.path.join(state_dir(environ), "reported", file_key(card))


# As large as anything lich takes in one body: an id that fits in a report must
# fit here too, or it is forgotten and re-reported on every call.
REPORTED_LIMIT = 64 * 1024


def last_reported(environ: Mapping[str, str], card: str) -> str | None:
    """`provider\\nid` as last accepted by lich for this card, or None."""
    data = read_bytes(_reported_path(environ, card), limit=REPORTED_LIMIT)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def remember_reported(environ: Mapping[str, str], card: str, value: str) -> None:
    write_atomic(_reported_path(environ, card), value.encode("utf-8", "surrogatepass"))


def forget_reported(environ: Mapping[str, str], card: str) -> None:
    """Drop the record before a new report goes out (best-effort).

    Until lich answers 204 nobody knows which id it holds: if the answer is
    lost (a timeout, the 2 s deadline), a stale record would make a later
    return to the old id look already reported. Without a record, the next
    Antigravity or Crush call simply reports again.
    """
    try:
        os.unlink(_reported_path(environ, card))
    except OSError:
        pass
