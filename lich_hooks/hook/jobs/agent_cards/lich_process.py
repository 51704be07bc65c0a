"""The lich CLI and git as argv lists, never a shell. `lich open` (up to ~110 s) runs in a session
of its own with its output in temporary files, so Esc's SIGINT neither reaches it nor leaves it
writing into a closed pipe: once lich may have the task, the hook must say so."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from typing import IO, Literal

    from lich_hooks.hook.jobs.agent_cards.eligibility import Call

    RunKind = Literal["printed", "launch-error", "timeout", "interrupted"]

OPEN_SECONDS = 120.0
# Tests and debugging may shorten the open's limit, never lengthen it past the registration's.
OPEN_SECONDS_VAR = "LICH_HOOK_OPEN_SECONDS"
GIT_SECONDS = 5.0
CONTROL_SECONDS = 30.0
SESSIONS_SECONDS = 3.0
STDOUT_LIMIT = 16 << 20
STDERR_LIMIT = 1 << 20

PRINTED: RunKind = "printed"
LAUNCH_ERROR: RunKind = "launch-error"
TIMEOUT: RunKind = "timeout"
INTERRUPTED: RunKind = "interrupted"

# An open left running when the hook was interrupted, held so its Popen is never finalised: the
# finaliser would warn on stderr under PYTHONWARNINGS or -X dev.
_LEFT_RUNNING: list[object] = []


class Interrupted(Exception):
    """SIGINT or SIGTERM reached the hook while `lich open` ran."""


class Ran:
    """How a lich command ended, its exit code (None: it could not run or finish) and output."""

    __slots__ = ("code", "error", "kind", "stderr", "stdout")

    def __init__(
        self,
        kind: RunKind,
        code: int | None = None,
        stdout: bytes = b"",
        stderr: bytes = b"",
        error: str | None = None,
    ) -> None:
        self.kind = kind
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.error = error

    @property
    def stderr_line(self) -> str | None:
        return last_line(self.stderr)


def open_seconds(environ: Mapping[str, str]) -> float:
    raw = environ.get(OPEN_SECONDS_VAR, "")
    try:
        value = float(raw)
    except ValueError:
        return OPEN_SECONDS
    return value if 0 < value < OPEN_SECONDS else OPEN_SECONDS


def usable_dir(path: str | None) -> str | None:
    return path if path and os.path.isabs(path) and os.path.isdir(path) else None


def current_branch(cwd: str | None, environ: Mapping[str, str]) -> str | None:
    """None on a detached HEAD, no git, or failure."""
    ran = run(["git", "branch", "--show-current"], environ, GIT_SECONDS, cwd)
    name = ran.stdout.decode("utf-8", "replace").strip()
    return name if ran.code == 0 and name else None


def open_argv(lich_bin: str, call: Call, branch: str | None, base: str | None) -> list[str]:
    """docs/agent-cards.md's argv."""
    argv = [lich_bin, "open", "--kind", "claude", "--subagent"]
    if branch is not None:
        argv += ["--worktree", branch]
        if base is not None:
            argv += ["--base", base]
    if call.model is not None:
        argv += _option("--model", call.model)
    argv += [*_option("--prompt", call.prompt), "--json"]
    return argv


def _option(name: str, value: str) -> list[str]:
    """`name=value` when the value starts with `-`: lich's parser would read it as an option."""
    return [f"{name}={value}"] if value.startswith("-") else [name, value]


def loggable(argv: list[str], prompt: str) -> list[str]:
    hidden = f"<{len(prompt)} chars>"
    out = []
    for i, arg in enumerate(argv):
        if arg == f"--prompt={prompt}":
            out.append(f"--prompt={hidden}")
        elif i > 0 and argv[i - 1] == "--prompt" and arg == prompt:
            out.append(hidden)
        else:
            out.append(arg)
    return out


def parse_object(out: bytes) -> dict[str, object] | None:
    """The JSON object lich printed: the whole stdout, else its last line that is one."""
    import json

    text = out.decode("utf-8", "replace").strip()
    candidates = [text] + [line.strip() for line in reversed(text.splitlines())]
    for candidate in candidates:
        if not candidate.startswith("{"):
            continue
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def last_line(err: bytes, limit: int = 400) -> str | None:
    """Where lich says why."""
    for line in reversed(err.decode("utf-8", "replace").splitlines()):
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return None


def _outputs(out: IO[bytes], err: IO[bytes]) -> tuple[bytes, bytes]:
    out.seek(0)
    err.seek(0)
    return out.read(STDOUT_LIMIT), err.read(STDERR_LIMIT)


def run_open(argv: list[str], cwd: str | None, environ: Mapping[str, str]) -> Ran:
    import tempfile

    guard = _Guard()
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            ended = _open_guarded(guard, argv, cwd, environ, out, err)
            return ended if isinstance(ended, Ran) else Ran(PRINTED, ended, *_outputs(out, err))
    except Interrupted:  # a signal while the guard came down
        return Ran(INTERRUPTED)


def _open_guarded(
    guard: _Guard,
    argv: list[str],
    cwd: str | None,
    environ: Mapping[str, str],
    out: IO[bytes],
    err: IO[bytes],
) -> int | Ran:
    import subprocess

    seconds = open_seconds(environ)
    proc: subprocess.Popen[bytes] | None = None
    answered = False
    try:
        guard.arm()
        proc = _start(argv, cwd, environ, out, err, own_session=True)  # Esc's signal misses it
        try:
            code = proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            # Past the limit the native agent runs: lich must not start the same task beside it.
            _kill_group(proc.pid)
            proc.wait()
            return Ran(TIMEOUT, error=f"{seconds:g}")
        answered = True
        return code
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        if proc is not None:
            raise
        return Ran(LAUNCH_ERROR, error=_describe(error))
    except Interrupted:
        if proc is None or proc.poll() is None:
            _LEFT_RUNNING.append(proc)
            return Ran(INTERRUPTED)
        return proc.returncode  # it ended as the signal came: its answer stands
    finally:
        guard.disarm(answered)


class _Guard:
    """SIGINT/SIGTERM raise Interrupted while `lich open` runs, then stay ignored: nothing may
    cut the verdict that keeps the native agent from running beside the worker."""

    def __init__(self) -> None:
        import signal

        self.previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        self.caught: list[int] = []

    def _on_signal(self, signum: int, frame: object) -> None:
        import signal

        self.caught.append(signum)
        for sig in self.previous:
            signal.signal(sig, signal.SIG_IGN)
        raise Interrupted()

    def arm(self) -> None:
        import signal

        for sig in self.previous:
            signal.signal(sig, self._on_signal)

    def disarm(self, answered: bool) -> None:
        """The old handlers, unless the open answered: then both are ignored until os._exit, set
        while blocked so one arriving in between is discarded, not delivered."""
        import signal

        if self.caught:
            return
        if not answered:
            for sig, handler in self.previous.items():
                signal.signal(sig, handler)
            return
        block = getattr(signal, "pthread_sigmask", None)
        mask = block(signal.SIG_BLOCK, list(self.previous)) if block is not None else None
        for sig in self.previous:
            signal.signal(sig, signal.SIG_IGN)
        if block is not None and mask is not None:
            block(signal.SIG_SETMASK, mask)


def _kill_group(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return type(error).__name__


def _start(
    argv: list[str],
    cwd: str | None,
    environ: Mapping[str, str],
    out: IO[bytes],
    err: IO[bytes],
    own_session: bool = False,
) -> subprocess.Popen[bytes]:
    """A lich (or git) process with no stdin and its output in our files."""
    import subprocess

    return subprocess.Popen(
        argv,
        cwd=usable_dir(cwd),
        env=dict(environ),
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=own_session,
    )


def run(argv: list[str], environ: Mapping[str, str], seconds: float, cwd: str | None = None) -> Ran:
    """A short lich or git command. Output in temporary files: we wait for the process, not EOF,
    so a helper it leaves holding our pipes cannot make it time out."""
    import subprocess
    import tempfile

    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = _start(argv, cwd, environ, out, err)
            try:
                code = proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                return Ran(TIMEOUT, error=f"no answer within {seconds:g} s")
            return Ran(PRINTED, code, *_outputs(out, err))
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        return Ran(LAUNCH_ERROR, error=_describe(error))
