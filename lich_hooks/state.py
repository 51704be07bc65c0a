"""The per-user state directory: small private files, written atomically.

Holds what must outlive one hook process: the id each card last reported, and
the report in flight for it (docs/session-start.md, Antigravity and Crush),
and the worker record (docs/agent-cards.md). Everything here is best-effort: a
missing, read-only or corrupt directory makes a hook forget, never fail.

What this module may change on a user's machine is only what it created
itself (docs/troubleshooting.md, "What lich-hook writes"):

- missing directories are made one level at a time, 0700; a directory that
  already existed (HOME, `~/.local`, a shared 1777 `/tmp`, `/`, or the state
  directory itself) is never chmod-ed, and a state directory under a shared
  sticky directory therefore works for a user who does not own that parent;
- the state directory must be a directory owned by the user and not writable
  by everyone; anything else (a file, a symlink to a file, someone else's
  directory) makes the hooks forget, and nothing is written into it;
- below it, every directory and file is opened without following symlinks
  (O_NOFOLLOW, relative to the parent's descriptor) and a file is read only
  when it is a regular file, opened O_NONBLOCK: a planted symlink cannot lead
  a write or a chmod out of the directory, and a FIFO cannot block a hook;
- HOME, XDG_STATE_HOME and LICH_HOOK_STATE_DIR are used only when they are
  absolute paths (XDG: relative ones are invalid): nothing is ever resolved
  against the harness's working directory (the user's project).

Records are pruned by age and count when a record is written, at most once
every PRUNE_EVERY seconds, so the no-op paths (which only read) never pay for
it and the directory stays at hundreds of files however long it is used.

The platform directory is computed here rather than with platformdirs: the
Crush and Antigravity no-op paths read this file on every tool or model call,
and importing platformdirs costs more than those paths' whole budget.
"""

from __future__ import annotations

import os
import stat
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

APP = "lich-hooks"

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
# Descriptor-relative calls (openat, mkdirat, renameat, unlinkat): POSIX. Where
# they are missing (Windows) the same calls take joined paths and lstat checks.
_AT = _O_DIRECTORY != 0 and os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd


# --- where --------------------------------------------------------------------------


def _absolute(value: str | None) -> str | None:
    """`value` when it is an absolute path (XDG: a relative one is invalid), else None."""
    return value if value and os.path.isabs(value) else None


def usable_home(environ: Mapping[str, str], passwd_home: Callable[[], str | None]) -> str | None:
    """HOME if absolute, else the account's home; never `/`.

    An empty or unset HOME falls back to the password database, like
    os.path.expanduser; a relative one is ignored. A home of `/` (common in
    containers: "no home") is no place for per-user state: lich-hooks then
    keeps none unless XDG_STATE_HOME or LICH_HOOK_STATE_DIR names one.
    """
    raw = environ.get("HOME")
    home = _absolute(raw) if raw else _absolute(passwd_home())
    if home is None or os.path.normpath(home) in ("/", "//"):
        return None
    return home


def _passwd_home() -> str | None:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return None


def state_dir(
    environ: Mapping[str, str], passwd_home: Callable[[], str | None] = _passwd_home
) -> str | None:
    """$LICH_HOOK_STATE_DIR, else the platform's per-user state directory; None: no usable one.

    Only absolute values count, so the result never depends on the working
    directory.
    """
    override = _absolute(environ.get("LICH_HOOK_STATE_DIR"))
    if override:
        return override
    if sys.platform == "win32":
        base = _absolute(environ.get("LOCALAPPDATA"))
        if base is None:
            home = _absolute(environ.get("USERPROFILE")) or usable_home(environ, passwd_home)
            base = os.path.join(home, "AppData", "Local") if home else None
        return os.path.join(base, APP) if base else None
    xdg = _absolute(environ.get("XDG_STATE_HOME")) if sys.platform != "darwin" else None
    if xdg:
        return os.path.join(xdg, APP)
    home = usable_home(environ, passwd_home)
    if home is None:
        return None
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", APP)
    return os.path.join(home, ".local", "state", APP)


def file_key(text: str) -> str:
    """A file name for an arbitrary id (a lich card id) that cannot escape the directory."""
    safe = "".join(c if (c.isascii() and (c.isalnum() or c in "-_")) else "_" for c in text)
    if safe == text and 0 < len(text) <= 100:
        return text
    import hashlib

    return safe[:40] + "-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Unusable(OSError):
    """The state directory exists but is not one lich-hooks may write into."""


def make_dirs(path: str) -> None:
    """Create `path` and its missing parents, one level at a time, each 0700.

    Only directories this call creates are touched: an existing parent keeps
    its mode and owner, whatever they are. A umask that takes the owner's
    own bits away (0o277) is corrected on the directory just made, nothing
    else.
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
        if os.name != "nt":
            mode = stat.S_IMODE(os.lstat(directory).st_mode)
            if mode != 0o700:
                os.chmod(directory, 0o700)


class _Dir:
    """An open directory inside the state directory: a descriptor where the
    platform has *at() calls, its path otherwise."""

    __slots__ = ("fd", "path")

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    def at(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def sub(self, name: str, create: bool) -> _Dir:
        """The directory `name` in this one, never through a symlink."""
        path = os.path.join(self.path, name)
        try:
            return _Dir(path, _open_dir(self.at(name), self.fd))
        except FileNotFoundError:
            if not create:
                raise
        try:
            os.mkdir(self.at(name), 0o700, dir_fd=self.fd)
        except FileExistsError:
            pass
        return _Dir(path, _open_dir(self.at(name), self.fd))

    def read(self, name: str, limit: int) -> bytes | None:
        """A regular file's bytes, or None (missing, special, a symlink, oversized)."""
        flags = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY
        try:
            fd = os.open(self.at(name), flags, dir_fd=self.fd)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks = []
            total = 0
            while total <= limit:
                chunk = os.read(fd, limit + 1 - total)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        except OSError:
            return None
        finally:
            os.close(fd)
        data = b"".join(chunks)
        return data if len(data) <= limit else None

    def write(self, name: str, data: bytes) -> None:
        """Replace the entry `name` with a 0600 file holding `data`, atomically.

        The temporary file is created O_EXCL|O_NOFOLLOW next to it and renamed
        over the entry: a symlink or FIFO planted there is replaced, never
        written through.
        """
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
        fd = os.open(self.at(tmp), flags, 0o600, dir_fd=self.fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(self.at(tmp), self.at(name), src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            self.unlink(tmp)
            raise

    def create(self, name: str, data: bytes) -> bool:
        """Create `name` only if no entry has that name (O_EXCL); False when one does."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY
        try:
            fd = os.open(self.at(name), flags, 0o600, dir_fd=self.fd)
        except FileExistsError:
            return False
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
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

    def names(self) -> list[str]:
        try:
            return os.listdir(self.fd if self.fd is not None else self.path)
        except OSError:
            return []


def _open_dir(path: str, dir_fd: int | None, follow: bool = False) -> int | None:
    """A descriptor for the directory at `path`; ENOTDIR/ELOOP when it is not one."""
    if not _AT:
        if dir_fd is None and not follow and os.path.islink(path):
            raise NotADirectoryError(path)
        if not os.path.isdir(path):
            raise FileNotFoundError(path) if not os.path.lexists(path) else NotADirectoryError(path)
        return None
    flags = os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC | (0 if follow else _O_NOFOLLOW)
    return os.open(path, flags, dir_fd=dir_fd)


def _check_root(root: _Dir) -> None:
    """Only a directory of this user's that others cannot write into holds our state."""
    if os.name == "nt" or not hasattr(os, "geteuid"):
        return
    info = os.fstat(root.fd) if root.fd is not None else os.stat(root.path)
    if info.st_uid != os.geteuid() or info.st_mode & 0o002:
        raise Unusable(
            f"{root.path} is not a private directory of this user "
            f"(owner uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o})"
        )


def open_root(environ: Mapping[str, str], create: bool) -> _Dir:
    """The state directory, opened; made (with its missing parents) when `create`.

    The configured path itself may be a symlink to a directory (the user's
    own choice); everything below it is opened without following any.
    """
    path = state_dir(environ)
    if path is None:
        raise Unusable("no absolute HOME, XDG_STATE_HOME or LICH_HOOK_STATE_DIR")
    try:
        root = _Dir(path, _open_dir(path, None, follow=True))
    except FileNotFoundError:
        if not create:
            raise
        make_dirs(path)
        root = _Dir(path, _open_dir(path, None, follow=True))
    try:
        _check_root(root)
    except BaseException:
        root.close()
        raise
    return root


def open_dir(environ: Mapping[str, str], parts: tuple[str, ...], create: bool) -> _Dir:
    """The directory `parts` inside the state directory (each part a file_key)."""
    current = open_root(environ, create)
    try:
        for part in parts:
            nested = current.sub(part, create)
            current.close()
            current = nested
    except BaseException:
        current.close()
        raise
    return current


def read(environ: Mapping[str, str], parts: tuple[str, ...], name: str, limit: int) -> bytes | None:
    """A record's bytes, or None when anything is missing, odd or unreadable."""
    try:
        directory = open_dir(environ, parts, create=False)
    except OSError:
        return None
    try:
        return directory.read(name, limit)
    finally:
        directory.close()


def write(environ: Mapping[str, str], parts: tuple[str, ...], name: str, data: bytes) -> None:
    """Write a record atomically (OSError when the directory refuses), then prune."""
    directory = open_dir(environ, parts, create=True)
    try:
        directory.write(name, data)
    finally:
        directory.close()
    maybe_prune(environ, time.time())


def remove(environ: Mapping[str, str], parts: tuple[str, ...], name: str) -> None:
    try:
        directory = open_dir(environ, parts, create=False)
    except OSError:
        return
    try:
        directory.unlink(name)
    finally:
        directory.close()


def entries(environ: Mapping[str, str], parts: tuple[str, ...]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every regular file in the directory `parts` (dot files skipped)."""
    try:
        directory = open_dir(environ, parts, create=False)
    except OSError:
        return
    try:
        for name in directory.names():
            if not name.startswith("."):
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


# --- pruning ------------------------------------------------------------------------

PRUNE_EVERY = 3600.0  # seconds between two prunes; the marker's mtime says when
PRUNE_MARKER = ".pruned"
REPORTED_MAX_AGE = 30 * 86400.0
REPORTED_MAX = 200
WORKERS_MAX_AGE = 14 * 86400.0
WORKERS_MAX = 200  # worker files over all cards
CLAIM_MAX_AGE = 60.0
CHECKED = ".checked"  # the status line's stamp in a card's workers/ directory


def maybe_prune(environ: Mapping[str, str], now: float) -> None:
    """Prune when the last prune is PRUNE_EVERY old: one lstat per record written.

    Runs where a record is written: in the detached sender after lich took a
    report, or after an agent card opened; never on a path that only reads.
    Best-effort: errors are swallowed.
    """
    try:
        root = open_root(environ, create=False)
    except OSError:
        return
    try:
        marker = root.lstat(PRUNE_MARKER)
        if marker is not None and 0 <= now - marker.st_mtime < PRUNE_EVERY:
            return
        root.write(PRUNE_MARKER, b"")
        prune(root, now)
    except OSError:
        pass
    finally:
        root.close()


def _dated(directory: _Dir) -> list[tuple[float, _Dir, str]]:
    """(mtime, directory, name) of every entry in `directory` that is not a directory."""
    dated = []
    for name in directory.names():
        info = directory.lstat(name)
        if info is not None and not stat.S_ISDIR(info.st_mode):
            dated.append((info.st_mtime, directory, name))
    return dated


def _drop(dated: list[tuple[float, _Dir, str]], now: float, max_age: float, keep: int) -> int:
    """Unlink the entries older than `max_age` and all but the newest `keep`."""
    dated.sort(key=lambda item: item[0], reverse=True)
    removed = 0
    for i, (when, directory, name) in enumerate(dated):
        if i >= keep or now - when > max_age:
            directory.unlink(name)
            removed += 1
    return removed


def prune(root: _Dir, now: float) -> int:
    """Remove old records; returns how many entries went.

    - `reported/`: ids older than REPORTED_MAX_AGE, and all but the newest
      REPORTED_MAX (a card that reports again after that simply re-reports);
    - `sending/`: claims older than CLAIM_MAX_AGE (a sender killed hard);
    - `workers/<card>/`: records older than WORKERS_MAX_AGE and all but the
      newest WORKERS_MAX over every card, then the card directories left
      without a record (and not touched for a minute).
    Stray temporary files (a writer killed between create and rename) go with
    their directory's other old entries.
    """
    removed = 0
    for name, max_age, keep in (
        ("reported", REPORTED_MAX_AGE, REPORTED_MAX),
        ("sending", CLAIM_MAX_AGE, REPORTED_MAX),
    ):
        try:
            directory = root.sub(name, create=False)
        except OSError:
            continue
        try:
            removed += _drop(_dated(directory), now, max_age, keep)
        finally:
            directory.close()
    try:
        workers = root.sub("workers", create=False)
    except OSError:
        return removed
    cards: list[_Dir] = []
    try:
        for card in workers.names():
            try:
                cards.append(workers.sub(card, create=False))
            except OSError:
                continue
        # When each card's directory last changed, before the pruning changes it.
        touched = {}
        for card_dir in cards:
            info = workers.lstat(os.path.basename(card_dir.path))
            touched[card_dir.path] = info.st_mtime if info is not None else now
        dated = [item for card_dir in cards for item in _dated(card_dir) if item[2] != CHECKED]
        removed += _drop(dated, now, WORKERS_MAX_AGE, WORKERS_MAX)
        for card_dir in cards:
            name = os.path.basename(card_dir.path)
            if any(entry != CHECKED for entry in card_dir.names()):
                continue
            if now - touched[card_dir.path] > 60:
                card_dir.unlink(CHECKED)
                workers.rmdir(name)
                removed += 1
    finally:
        for card_dir in cards:
            card_dir.close()
        workers.close()
    return removed


# --- the last id each card reported (docs/session-start.md) ---------------------------

# As large as anything lich takes in one body: an id that fits in a report must
# fit here too, or it is forgotten and re-reported on every call.
REPORTED_LIMIT = 64 * 1024
REPORTED = ("reported",)


def last_reported(environ: Mapping[str, str], card: str) -> str | None:
    """`provider\\nid` as last accepted by lich for this card, or None."""
    data = read(environ, REPORTED, file_key(card), REPORTED_LIMIT)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def remember_reported(environ: Mapping[str, str], card: str, value: str) -> None:
    write(environ, REPORTED, file_key(card), value.encode("utf-8", "surrogatepass"))


def forget_reported(environ: Mapping[str, str], card: str) -> None:
    """Drop the record before a new report goes out (best-effort).

    Until lich answers 204 nobody knows which id it holds: if the answer is
    lost (a timeout, the 2 s deadline), a stale record would make a later
    return to the old id look already reported. Without a record, the next
    Antigravity or Crush call simply reports again.
    """
    remove(environ, REPORTED, file_key(card))


# --- the report in flight (docs/session-start.md, "calls in quick succession") --------

SENDING = ("sending",)
# A claim outlives its sender only when the sender was killed hard: the send's
# own deadline is 2 s, so an older claim is taken over.
CLAIM_SECONDS = 3.0


def _claim_name(card: str, value: str) -> str:
    import hashlib

    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{file_key(card)}.{digest}"


def claim(environ: Mapping[str, str], card: str, value: str, now: float) -> bool | None:
    """Take the one report in flight for this card and id.

    True: this call sends (and must `release` when the send ends). False:
    another call's report of the same id is in flight, which counts as taken.
    None: the state directory cannot hold a claim, so this call sends anyway
    (duplicates, never a lost report).
    """
    try:
        directory = open_dir(environ, SENDING, create=True)
    except OSError:
        return None
    name = _claim_name(card, value)
    try:
        for _ in range(2):
            if directory.create(name, repr(now).encode()):
                return True
            info = directory.lstat(name)
            if info is None:
                continue  # released just now: try again
            if stat.S_ISREG(info.st_mode) and -1.0 < now - info.st_mtime < CLAIM_SECONDS:
                return False
            directory.unlink(name)  # stale (its sender was killed), or not a file
        return None
    except OSError:
        return None
    finally:
        directory.close()


def release(environ: Mapping[str, str], card: str, value: str) -> None:
    """End this card and id's report in flight (after the record is written)."""
    remove(environ, SENDING, _claim_name(card, value))
