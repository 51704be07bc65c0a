"""Windows' procfs (docs/harnesses.md, Windows): parents from one Toolhelp32 snapshot, command
lines from each PEB (Wine 8 does not answer NtQueryInformationProcess class 60); failures: None."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence
    from typing import Any

TH32CS_SNAPPROCESS = 0x2
PROCESS_QUERY_INFORMATION = 0x0400
PROCESS_VM_READ = 0x0010
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
MAX_PATH = 260
# 64-bit layouts (winternl.h): PEB.ProcessParameters, and in RTL_USER_PROCESS_PARAMETERS
# the CommandLine UNICODE_STRING. A 32-bit Python reads none of them (None: refused).
PEB_PROCESS_PARAMETERS = 0x20
PARAMS_COMMAND_LINE = 0x70
MAX_COMMAND_LINE = 1 << 16  # bytes; a UNICODE_STRING cannot be longer anyway


def ancestors(
    start: int, stop: Callable[[Sequence[str]], bool], limit: int = 32
) -> list[tuple[int, list[str]]] | None:
    """argv[0] is the image name Windows records; an unreadable `stop` process makes it None."""
    import sys

    if sys.platform != "win32":
        return None
    try:
        import ctypes

        if ctypes.sizeof(ctypes.c_void_p) != 8:
            return None
        table = _snapshot()
        return None if table is None else chain(table, start, stop, _created, _command_line, limit)
    except (OSError, AttributeError, ValueError):
        return None


def processes(
    names: Collection[str], wanted: Callable[[list[str]], bool]
) -> list[tuple[int, list[str]]]:
    import sys

    if sys.platform != "win32":
        return []
    try:
        table = _snapshot() or {}
        found = []
        for pid, (_, image) in sorted(table.items()):
            if image.lower() not in names:
                continue
            line = _command_line(pid)
            argv = [image, *split(line)[1:]] if line is not None else None
            if argv is not None and wanted(argv):
                found.append((pid, argv))
        return found
    except (OSError, AttributeError, ValueError):
        return []


def chain(
    table: Mapping[int, tuple[int, str]],
    start: int,
    stop: Callable[[Sequence[str]], bool],
    created: Callable[[int], int | None],
    command_line: Callable[[int], str | None],
    limit: int = 32,
) -> list[tuple[int, list[str]]] | None:
    if start not in table:
        return None
    found: list[tuple[int, list[str]]] = []
    pid = start
    born = created(pid)
    for _ in range(limit):
        parent, image = table[pid]
        line = command_line(pid)
        if line is None:
            if stop([image]):
                return None
            argv = [image]
        else:
            argv = [image, *split(line)[1:]]
        found.append((pid, argv))
        if stop(argv) or parent not in table or parent == 0 or parent in dict(found):
            break  # the top, a parent gone, or a loop of reused pids
        parent_born = created(parent)
        if born is not None and parent_born is not None and parent_born > born:
            break  # the pid was reused: the real parent is gone
        pid, born = parent, parent_born
    return found


def _kernel32() -> Any:
    import ctypes
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    kernel32.OpenProcess.restype = wintypes.HANDLE
    kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    return kernel32


def _snapshot() -> dict[int, tuple[int, str]] | None:
    """pid -> (parent pid, image name)."""
    import ctypes
    from ctypes import wintypes

    class Entry(ctypes.Structure):
        _fields_ = (
            ("dwSize", wintypes.DWORD),
            ("cntUsage", wintypes.DWORD),
            ("th32ProcessID", wintypes.DWORD),
            ("th32DefaultHeapID", ctypes.c_size_t),
            ("th32ModuleID", wintypes.DWORD),
            ("cntThreads", wintypes.DWORD),
            ("th32ParentProcessID", wintypes.DWORD),
            ("pcPriClassBase", ctypes.c_long),
            ("dwFlags", wintypes.DWORD),
            ("szExeFile", ctypes.c_wchar * MAX_PATH),
        )

    kernel32 = _kernel32()
    kernel32.CreateToolhelp32Snapshot.restype = wintypes.HANDLE
    kernel32.CreateToolhelp32Snapshot.argtypes = (wintypes.DWORD, wintypes.DWORD)
    kernel32.Process32FirstW.argtypes = (wintypes.HANDLE, ctypes.POINTER(Entry))
    kernel32.Process32NextW.argtypes = (wintypes.HANDLE, ctypes.POINTER(Entry))
    kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
    snap = kernel32.CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0)
    if not snap or snap == wintypes.HANDLE(-1).value:
        return None
    table: dict[int, tuple[int, str]] = {}
    try:
        entry = Entry()
        entry.dwSize = ctypes.sizeof(Entry)
        more = kernel32.Process32FirstW(snap, ctypes.byref(entry))
        while more:
            table[entry.th32ProcessID] = (entry.th32ParentProcessID, entry.szExeFile)
            more = kernel32.Process32NextW(snap, ctypes.byref(entry))
    finally:
        kernel32.CloseHandle(snap)
    return table


def _created(pid: int) -> int | None:
    """FILETIME as an int."""
    import ctypes
    from ctypes import wintypes

    kernel32 = _kernel32()
    handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        return None
    try:
        times = (ctypes.c_ulonglong * 4)()
        kernel32.GetProcessTimes.argtypes = (wintypes.HANDLE, *([ctypes.c_void_p] * 4))
        if not kernel32.GetProcessTimes(
            handle, *(ctypes.addressof(times) + 8 * i for i in range(4))
        ):
            return None
        return int(times[0])
    finally:
        kernel32.CloseHandle(handle)


def _command_line(pid: int) -> str | None:
    import ctypes
    from ctypes import wintypes

    kernel32 = _kernel32()
    ntdll = ctypes.WinDLL("ntdll")  # type: ignore[attr-defined,unused-ignore]
    kernel32.ReadProcessMemory.argtypes = (
        wintypes.HANDLE,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_size_t),
    )
    ntdll.NtQueryInformationProcess.argtypes = (
        wintypes.HANDLE,
        ctypes.c_int,
        ctypes.c_void_p,
        wintypes.ULONG,
        ctypes.POINTER(wintypes.ULONG),
    )
    handle = kernel32.OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, False, pid)
    if not handle:
        return None

    def read(address: int, size: int) -> bytes | None:
        buffer = ctypes.create_string_buffer(size)
        done = ctypes.c_size_t()
        ok = kernel32.ReadProcessMemory(handle, address, buffer, size, ctypes.byref(done))
        return buffer.raw[:size] if ok and done.value == size else None

    try:
        basic = (ctypes.c_ulonglong * 6)()  # PROCESS_BASIC_INFORMATION, 48 bytes
        status = ntdll.NtQueryInformationProcess(
            handle, 0, basic, ctypes.sizeof(basic), ctypes.byref(wintypes.ULONG())
        )
        if status != 0 or not basic[1]:
            return None
        peb = read(basic[1] + PEB_PROCESS_PARAMETERS, 8)
        params = int.from_bytes(peb, "little") if peb else 0
        header = read(params + PARAMS_COMMAND_LINE, 16) if params else None
        if header is None:
            return None
        length = int.from_bytes(header[0:2], "little")
        buffer = int.from_bytes(header[8:16], "little")
        if length == 0 or not buffer or length > MAX_COMMAND_LINE:
            return None
        raw = read(buffer, length)
        return None if raw is None else raw.decode("utf-16-le", "replace")
    finally:
        kernel32.CloseHandle(handle)


def split(line: str) -> list[str]:
    """As CommandLineToArgvW: the program name to a space or its closing quote, then the C
    runtime's backslash-and-quote rules."""
    program, index = _program(line)
    argv = [program]
    word: list[str] | None = None
    quoted = False
    while index < len(line):
        char = line[index]
        if char in " \t" and not quoted:
            if word is not None:
                argv.append("".join(word))
                word = None
            index += 1
            continue
        word = [] if word is None else word
        if char == "\\":
            index = _backslashes(line, index, word)
        elif char == '"' and quoted and line[index + 1 : index + 2] == '"':
            word.append('"')  # "" inside quotes: one quote
            index += 2
        elif char == '"':
            quoted = not quoted
            index += 1
        else:
            word.append(char)
            index += 1
    if word is not None:
        argv.append("".join(word))
    return argv


def _program(line: str) -> tuple[str, int]:
    """The program name, with no escapes: to its closing quote, or to the first blank."""
    if line.startswith('"'):
        end = line.find('"', 1)
        end = len(line) if end < 0 else end
        return line[1:end], end + 1
    end = 0
    while end < len(line) and line[end] not in " \t":
        end += 1
    return line[:end], end


def _backslashes(line: str, index: int, word: list[str]) -> int:
    """A run of backslashes: halved before a quote (an odd one escapes it), else literal."""
    run = index
    while run < len(line) and line[run] == "\\":
        run += 1
    count = run - index
    if run < len(line) and line[run] == '"':
        word.append("\\" * (count // 2))
        if count % 2:
            word.append('"')
            return run + 1
        return run
    word.append("\\" * count)
    return run
