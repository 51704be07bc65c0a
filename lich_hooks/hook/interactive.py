"""Interactive Claude Code, or `claude -p`? docs/worker-answer.md ("Interactive sessions
only"): two dict lookups, then a few /proc files of the nearest claude ancestor."""

from __future__ import annotations

import os
import sys

from lich_hooks.hook import procfs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PRINT_FLAGS = ("-p", "--print")
PRINT_CLUSTERS = ("-cp", "-pc")  # with Claude Code's other boolean short flag, `-c`
INTERPRETERS = ("node", "nodejs", "bun", "deno", "python")
CLAUDE_NAMES = ("claude", "claude.exe", "claude.js", "claude.mjs", "claude.cjs")
NATIVE_VERSIONS = "/claude/versions/"  # the native installer's binaries, named by version
NPM_ENTRY = "/@anthropic-ai/claude-code/cli.js"
TERMINALS = ("/dev/pts/", "/dev/tty", "/dev/console")
MAX_ANCESTORS = 32


class Evidence:
    __slots__ = ("interactive", "why")

    def __init__(self, interactive: bool, why: str) -> None:
        self.interactive = interactive
        self.why = why

    def __repr__(self) -> str:
        return f"Evidence({self.interactive}, {self.why!r})"


def check(environ: Mapping[str, str], proc: str = "/proc", start: int | None = None) -> Evidence:
    attended = environ.get("CLAUDE_CODE_SESSION_ATTENDED")
    if attended in ("0", "1"):
        return Evidence(attended == "1", f"CLAUDE_CODE_SESSION_ATTENDED={attended}")
    entrypoint = environ.get("CLAUDE_CODE_ENTRYPOINT", "")
    if entrypoint.startswith("sdk"):
        return Evidence(False, f"CLAUDE_CODE_ENTRYPOINT={entrypoint}")
    if sys.platform == "win32":  # the platform decides: under Wine a Linux /proc may show
        return Evidence(True, "no evidence (Windows: the claude process is not looked for)")
    found = find_claude(environ, proc, os.getppid() if start is None else start)
    if found is None:
        if not os.path.isdir(proc):
            return Evidence(True, f"no evidence (no {proc} to find the claude process)")
        return Evidence(True, "no evidence (no claude process among the ancestors)")
    pid, argv = found
    if prints(argv):
        return Evidence(False, f"claude process {pid} runs with -p/--print")
    try:
        stdin: str | None = os.readlink(f"{proc}/{pid}/fd/0")
    except OSError:
        stdin = None
    if stdin is not None and not stdin.startswith(TERMINALS):
        return Evidence(False, f"claude process {pid} has no terminal on stdin ({stdin})")
    if stdin is None:
        return Evidence(True, f"claude process {pid}: no -p, stdin unreadable")
    return Evidence(True, f"claude process {pid}: no -p, terminal on stdin")


def prints(argv: list[str]) -> bool:
    for arg in argv[1:]:
        if arg == "--":
            return False
        if arg in PRINT_FLAGS or arg in PRINT_CLUSTERS or arg.startswith("--print="):
            return True
    return False


def is_claude(argv: list[str]) -> bool:
    """A native `claude` executable, or an interpreter running a script named `claude`."""
    if not argv:
        return False
    if _is_claude_path(argv[0]):
        return True
    if _basename(argv[0]).split(".")[0].rstrip("0123456789") in INTERPRETERS:
        args = argv[1:]
        if args[:1] == ["run"]:  # `bun run …`, `deno run …`
            args = args[1:]
        for arg in args:
            if not arg.startswith("-"):
                return _is_claude_path(arg) or arg.replace("\\", "/").endswith(NPM_ENTRY)
    return False


def _is_claude_path(path: str) -> bool:
    return _basename(path) in CLAUDE_NAMES or NATIVE_VERSIONS in path.replace("\\", "/")


def find_claude(environ: Mapping[str, str], proc: str, start: int) -> tuple[int, list[str]] | None:
    """An inherited CLAUDE_PID outside our chain says nothing."""
    named = environ.get("CLAUDE_PID", "")
    claude_pid = int(named) if named.isascii() and named.isdigit() else None
    pid = start
    for _ in range(MAX_ANCESTORS):
        if pid <= 1:
            return None
        argv = procfs.cmdline(pid, proc)
        if argv is None:
            return None
        if pid == claude_pid or is_claude(argv):
            return pid, argv
        parent = procfs.parent(pid, proc)
        if parent is None or parent == pid:
            return None
        pid = parent
    return None


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1].lower()
