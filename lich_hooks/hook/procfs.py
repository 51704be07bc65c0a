"""/proc reads for the interactive check and the shared-process attributions. Linux only;
every failure is None, and callers fall back as their docs say."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection


def cmdline(pid: int, proc: str = "/proc") -> list[str] | None:
    """Undecodable bytes replaced: argv is compared and shown, never run."""
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as handle:
            raw = handle.read(1 << 16)
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _stat(pid: int, field: int, proc: str) -> int | None:
    """Counted after the last ')': the name may hold one."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as handle:
            stat = handle.read(4096)
        return int(stat[stat.rindex(b")") + 2 :].split()[field])
    except (OSError, ValueError, IndexError):
        return None


def parent(pid: int, proc: str = "/proc") -> int | None:
    return _stat(pid, 1, proc)


def comm(pid: int, proc: str = "/proc") -> bytes | None:
    """The kernel's 15-byte process name, lowercased: a scan reads it before any argv."""
    try:
        with open(f"{proc}/{pid}/comm", "rb") as handle:
            return handle.read(64).strip().lower()
    except OSError:
        return None


def cwd(pid: int, proc: str = "/proc") -> str | None:
    import os

    try:
        path = os.readlink(f"{proc}/{pid}/cwd")
    except OSError:
        return None
    return None if path.endswith(" (deleted)") else path


def started(pid: int, proc: str = "/proc") -> int | None:
    """Field 22: with the pid it names one process for its whole life."""
    return _stat(pid, 19, proc)


def processes(
    names: Collection[bytes], wanted: Callable[[list[str]], bool], proc: str = "/proc"
) -> list[tuple[int, list[str]]]:
    """Doctor's scans: comm first, one short read."""
    import os

    try:
        entries = os.listdir(proc)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.isdigit() and comm(int(entry), proc) in names:
            argv = cmdline(int(entry), proc)
            if argv is not None and wanted(argv):
                found.append((int(entry), argv))
    return found
