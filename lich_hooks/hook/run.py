"""read → decide → print → report: the only code that writes a hook's stdout, starts a report and
catches everything, so every job gets docs/harnesses.md's guarantees."""

from __future__ import annotations

import os
import sys
import time

from lich_hooks.base import harnesses as harness
from lich_hooks.base.lichenv import LichEnv
from lich_hooks.base.runlog import RunLog
from lich_hooks.hook.outcome import PENDING, Context, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


def _session_start(ctx: Context) -> Outcome:
    from lich_hooks.hook.jobs import session_start

    return session_start.run(ctx)


def _worker_answer(ctx: Context) -> Outcome:
    from lich_hooks.hook.jobs import worker_answer

    return worker_answer.run(ctx)


def _agent_cards(ctx: Context) -> Outcome:
    from lich_hooks.hook.jobs.agent_cards import pre_tool_use

    return pre_tool_use.run(ctx)


# harness.py's job names -> the job; each imports its module only when it runs.
JOBS: dict[str, Callable[[Context], Outcome]] = {
    harness.SESSION_START: _session_start,
    harness.WORKER_ANSWER: _worker_answer,
    harness.AGENT_CARDS: _agent_cards,
}


def run(
    event_arg: str,
    provider_arg: str | None,
    environ: Mapping[str, str],
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    started: float | None = None,
    plugin: bool = False,
    handoff: tuple[int, str] | None = None,
) -> int:
    """Run one hook event; always 0. `plugin`: a plugin's own copy runs it (hook/claim.py);
    `handoff`: its launcher's pid and private folder, where `stdout_fd` is a file of it."""
    log = RunLog(environ, started)
    event = harness.fold_event(event_arg)
    provider = harness.fold_provider(provider_arg)
    log.set(event=event or event_arg, provider=provider or provider_arg)
    if plugin:
        log.set(route="plugin")
    fallback = harness.default_stdout(provider, event)
    ctx, outcome = _decide(event, provider, environ, log, stdin_fd)
    log.set(decision=outcome.decision, decide_ms=log.elapsed_ms())
    log.debug(f"{event or event_arg} {provider or provider_arg}: {outcome.decision}")
    out = fallback if outcome.stdout is None else outcome.stdout
    whole = _write_all(stdout_fd, out)
    if handoff is not None:
        _settle(stdout_fd, out, whole, handoff, log)
    if ctx is not None and (outcome.later or (outcome.endpoint and outcome.body is not None)):
        try:
            _send_detached(ctx.env, outcome, log, environ)
            return 0
        except BaseException as error:
            log.set(error=f"{type(error).__name__}: {error}")
            _call(outcome.on_end)
    log.write()
    _prune_after(environ, inline=False)
    return 0


def _decide(
    event: str | None,
    provider: str | None,
    environ: Mapping[str, str],
    log: RunLog,
    stdin_fd: int,
) -> tuple[Context | None, Outcome]:
    """The job's outcome, and its context where a job ran; whatever it raises is an outcome."""
    ctx: Context | None = None
    try:
        route = harness.route(provider, event) if (provider and event) else None
        if route is None:
            reason = "unknown-event" if event is None else "unknown-provider"
            return None, Outcome(reason if event is None or provider is None else "no-job")
        assert event is not None and provider is not None
        ctx = Context(event, provider, route, environ, LichEnv(environ), log, stdin_fd)
        return ctx, JOBS[route.job](ctx)
    except BaseException as error:
        log.set(error=f"{type(error).__name__}: {error}")
        return ctx, Outcome("internal-error")


def _prune_after(environ: Mapping[str, str], inline: bool) -> None:
    """Looked up, not imported: the no-op paths must not pay for the import."""
    state = sys.modules.get("lich_hooks.hook.state")
    if state is not None and state.WRITTEN:
        from lich_hooks.hook.state import prune

        prune.after_run(environ, time.time(), inline)


def _send_detached(env: LichEnv, outcome: Outcome, log: RunLog, environ: Mapping[str, str]) -> None:
    """Report without keeping the harness waiting: a child holding none of its pipes (inline
    where there is no fork) decides what `later` left open, sends, logs, prunes and exits."""
    from lich_hooks.base import transport
    from lich_hooks.hook import detach

    pid = detach.fork()
    if pid > 0:
        return
    if pid < 0 and hasattr(os, "fork"):
        if outcome.decision == PENDING:
            # Its evidence comes seconds later (Codex's daemon log): inline, the harness would
            # wait for it. None beats a stalled session (docs/transport.md).
            log.set(decision="no-fork-to-wait")
            log.write()
            return
        log.debug("fork failed; sending inline")
    try:
        while outcome.later is not None:  # a later decision may leave one more for later
            try:
                outcome = outcome.later()
            except Exception as error:
                outcome = Outcome("internal-error")
                log.set(error=f"{type(error).__name__}: {error}")
            log.set(decision=outcome.decision, decide_ms=log.elapsed_ms())
        if outcome.endpoint is None or outcome.body is None:
            log.write()
            _prune_after(environ, inline=True)  # a claim or a refusal was written, maybe
            return
        # A send whose claim ran out while this child waited for a CPU sends nothing: another
        # call may have taken the report over (session_record.claim).
        left = transport.DEADLINE if outcome.send_by is None else outcome.send_by - time.time()
        if left > 0:
            result = transport.post(
                outcome.env or env, outcome.endpoint, outcome.body, seconds=left
            )
        else:
            result = transport.Result(None, "claim-expired", 0.0)
        _call(outcome.on_taken if result.taken else None, log)
        _call(outcome.on_end, log)
        log.set(outcome=result.outcome, status=result.status, error=result.error, send_ms=result.ms)
        log.debug(f"POST /{outcome.endpoint}: {result.outcome} ({result.status or result.error})")
        log.write()
        _prune_after(environ, inline=True)
    finally:
        if pid == 0:
            os._exit(0)


def _call(callback: Callable[[], None] | None, log: RunLog | None = None) -> None:
    try:
        if callback is not None:
            callback()
    except Exception as error:  # best-effort state (docs/session-start.md), never the turn
        if log is not None:
            log.set(state_error=type(error).__name__)


def _write_all(fd: int, data: bytes) -> bool:
    """Whether all of `data` was written."""
    try:
        while data:
            written = os.write(fd, data)
            data = data[written:]
    except OSError:
        return False  # a harness that closed our stdout has stopped listening
    return True


def _settle(fd: int, data: bytes, whole: bool, handoff: tuple[int, str], log: RunLog) -> None:
    """The launcher copies the file to the harness once we end: only a file holding exactly our
    output is left to it (a full disk, or another writer of it, and the output goes by FIFO)."""
    launcher, folder = handoff
    try:
        whole = whole and os.fstat(fd).st_size == len(data)
    except OSError:
        whole = False
    if whole:
        try:
            os.rmdir(folder)  # spares the launcher its `rm` (unless another candidate left a file)
        except OSError:
            pass
        return
    from lich_hooks.hook import handoff as second_way

    log.set(stdout_via=second_way.hand_over(fd, data, launcher, folder))


HOOK_USAGE = "As a hook: lich-hook <event> [<provider>]  (payload on stdin; see docs/harnesses.md)"


def main_from_argv(
    args: list[str], plugin: bool = False, handoff: tuple[int, str] | None = None
) -> int:
    """An unknown event is silence for a harness, a usage line and 2 for a person at a terminal."""
    started = time.monotonic()
    if not args:
        return 0
    if not plugin and harness.fold_event(args[0]) is None and os.isatty(0):
        _write_all(
            2,
            f"lich-hook: no command or event named {args[0]!r} (see: lich-hook --help)\n"
            f"{HOOK_USAGE}\n".encode("utf-8", "backslashreplace"),
        )
        return 2
    provider = args[1] if len(args) > 1 else None
    return run(args[0], provider, os.environ, started=started, plugin=plugin, handoff=handoff)
