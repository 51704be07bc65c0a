"""Is this hook running under an interactive Claude Code, or under `claude -p`?

SPEC §7: a `claude -p` started from a tool inside a lich card inherits every
lich variable, and must neither open cards nor answer a worker's errand.
Command hooks get no payload field saying "print mode", so this module reads
the evidence, cheapest first, and stops at the first that decides:

1. `CLAUDE_CODE_SESSION_ATTENDED` (set by Claude Code 2.1.3xx): `1` yes, `0` no.
2. `CLAUDE_CODE_ENTRYPOINT` starting with `sdk` (`sdk-cli`, `sdk-ts`, …): no.
3. The ancestor `claude` process (`CLAUDE_PID` when set, else the nearest
   ancestor that is `claude` or an interpreter running a script named
   `claude`): `-p`/`--print` in its argv, or a stdin that is not a terminal: no.

Without evidence the answer is "interactive": the spec defaults to *not
interactive* only on evidence. Step 3 reads /proc and so works on Linux only;
elsewhere an older Claude Code without the variables is taken as interactive.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PRINT_FLAGS = ("-p", "--print")
INTERPRETERS = ("node", "nodejs", "bun", "deno")
MAX_ANCESTORS = 32


class Evidence:
    """The answer and the evidence that decided it (for the debug log and doctor)."""

    __slots__ = ("interactive", "why")

    def __init__(self, interactive: bool, why: str) -> None:
        self.interactive = interactive
        self.why = why

    def __repr__(self) -> str:
        return f"Evidence({self.interactive}, {self.why!r})"


def check(environ: Mapping[str, str], proc: str = "/proc") -> Evidence:
    attended = environ.get("CLAUDE_CODE_SESSION_ATTENDED")
    if attended in ("0", "1"):
        return Evidence(attended == "1", f"CLAUDE_CODE_SESSION_ATTENDED={attended}")
    entrypoint = environ.get("CLAUDE_CODE_ENTRYPOINT", "")
    if entrypoint.startswith("sdk"):
        return Evidence(False, f"CLAUDE_CODE_ENTRYPOINT={entrypoint}")
    pid = _claude_pid(environ, proc)
    if pid is None:
        return Evidence(True, "no evidence (no claude process found)")
    argv = _cmdline(proc, pid) or []
    if any(arg in PRINT_FLAGS or arg.startswith("--print=") for arg in argv[1:]):
        return Evidence(False, f"claude process {pid} runs with -p/--print")
    stdin = _stdin_target(proc, pid)
    if stdin is not None and not _is_terminal(stdin):
        return Evidence(False, f"claude process {pid} has no terminal on stdin ({stdin})")
    return Evidence(True, f"claude process {pid} is interactive")


def is_claude(argv: list[str]) -> bool:
    """A native `claude` binary, or an interpreter running a script named `claude`."""
    if not argv:
        return False
    name = os.path.basename(argv[0])
    if name in ("claude", "claude.exe"):
        return True
    if name.split(".")[0].rstrip("0123456789") in INTERPRETERS:
        scripts = [arg for arg in argv[1:] if not arg.startswith("-")]
        return bool(scripts) and os.path.basename(scripts[0]) == "claude"
    return False


def _claude_pid(environ: Mapping[str, str], proc: str) -> int | None:
    named = environ.get("CLAUDE_PID", "")
    if named.isascii() and named.isdigit():
        return int(named)
    pid = os.getppid()
    for _ in range(MAX_ANCESTORS):
        if pid <= 1:
            return None
        argv = _cmdline(proc, pid)
        if argv is None:
            return None
        if is_claude(argv):
            return pid
        parent = _parent(proc, pid)
        if parent is None:
            return None
        pid = parent
    return None


def _cmdline(proc: str, pid: int) -> list[str] | None:
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _parent(proc: str, pid: int) -> int | None:
    try:
        with open(f"{proc}/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _stdin_target(proc: str, pid: int) -> str | None:
    try:
        return os.readlink(f"{proc}/{pid}/fd/0")
    except OSError:
        return None


def _is_terminal(target: str) -> bool:
    return target.startswith(("/dev/pts/", "/dev/tty", "/dev/console"))
