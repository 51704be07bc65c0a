"""Codex's shared app-server daemon: find the card a hook reports for, or refuse; joins
decide.py's rules, probe.py's reading of the clients and evidence.py's of the daemon's log
(docs/harnesses.md, Codex)."""

from __future__ import annotations

import os
import time

from lich_hooks.base.lichenv import LichEnv
from lich_hooks.hook.shared import core
from lich_hooks.hook.shared.codex import decide, probe
from lich_hooks.hook.shared.core import Card
from lich_hooks.hook.shared.proc import ancestors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lich_hooks.hook.outcome import Context
    from lich_hooks.hook.shared.core import AttributionDecision

UNSUPPORTED: AttributionDecision = "codex-daemon-unsupported"
PROBE_FAILED: AttributionDecision = "codex-daemon-probe-failed"
NO_DAEMON = "start Codex in lich cards with `codex --no-daemon`"
AGAIN = f"quit Codex in that card and start it again on its own, or {NO_DAEMON}"
# What the person is told of a refusal inside lich (Codex's one line, doctor): its cause, then
# the one fix. A refusal not here (no lich card's client to tell) is not told.
TOLD: dict[str, tuple[str, str]] = {
    UNSUPPORTED: ("this system offers no way to find which Codex window it came from", NO_DAEMON),
    PROBE_FAILED: (
        "lich-hook could not read Codex's background daemon",
        f"stop it (`codex app-server daemon stop`), or {NO_DAEMON}",
    ),
    decide.UNACCOUNTED: (
        "a program connected to Codex's background daemon cannot be read (a Codex started under "
        "another name or by another user), so the conversation may be its",
        f"start Codex in lich cards as `codex`, or {NO_DAEMON}",
    ),
    decide.UNTRUSTED: (
        "Codex's log cannot be trusted",
        "an absolute CODEX_HOME only you can write",
    ),
    decide.NO_EVIDENCE: ("Codex's log did not show in time which window started it", NO_DAEMON),
    decide.SHARED_THREAD: ("another Codex client opened it too (`/resume`)", NO_DAEMON),
    decide.UNTIED: ("Codex's log does not prove which window started it", AGAIN),
}


def told(decision: str, cause: object = None) -> str:
    said, fix = TOLD[decision]
    return f"{said} ({cause}); {fix}" if cause else f"{said}; {fix}"


def card(ctx: Context) -> Card:
    """The card the detached sender finds in the daemon's log, or a refusal at once (inside
    lich with the person's line), or the hook's own when a codex client runs it as its child."""
    from lich_hooks.hook.outcome import Outcome

    started, hook_started = time.monotonic(), time.time()
    shared = core.shared_runner(ctx, who_runs(), "codex")
    if shared is None:
        return Card(ctx.env, own=True)
    if isinstance(shared, Outcome):
        return Card(refusal=shared)
    pid, payload = shared
    clients: list[decide.Client] = []
    found = find_card(pid, seen=clients, ours=_ours(ctx))
    thread, home = payload.session_id, None
    if found is None and thread:
        home = log_home(ctx.environ)
        found = home if isinstance(home, decide.Attribution) else None
    if found is None:
        if not isinstance(home, str) or not thread:
            return Card(refusal=Outcome("no-session-id"))
        daemon = identity(pid)

        def later() -> Card:
            assert isinstance(home, str) and thread
            found = from_log(home, pid, thread, clients, hook_started, ctx.environ, ctx.log.set)
            if found.lich is None and found.decision in TOLD and daemon:
                from lich_hooks.hook.shared.codex import refused

                why = {"decision": found.decision, "cause": found.cause, "at": hook_started}
                refused.remember(ctx.environ, daemon, thread, cwd=payload.text("cwd"), **why)
            return _answer(ctx, found, started)

        return Card(later=later, say=_earlier(ctx.environ, daemon))
    result = _answer(ctx, found, started)
    inside = any(c.lich for c in clients) or ctx.env.can_report
    if inside and found.decision in TOLD and payload.text("source") != "compact":
        # the person sees why and the fix (a compaction was told already)
        line = f"this conversation is not linked to its card: {told(found.decision, found.cause)}"
        assert result.refusal is not None
        result.refusal.stdout = _message(line)
    return result


def _answer(ctx: Context, found: decide.Attribution, started: float) -> Card:
    result = core.attributed(ctx, found, started)
    return Card(result) if isinstance(result, LichEnv) else Card(refusal=result)


def _message(line: str) -> bytes:
    """The one line Codex's TUI shows for a SessionStart (`↳ Hook · lich: …`)."""
    from lich_hooks.base.transport import encode

    return encode({"systemMessage": f"lich: {line}"})


def identity(daemon: int) -> str | None:
    """The daemon's pid and start (ticks), naming this daemon's life and no later one."""
    from lich_hooks.hook import procfs

    ticks = procfs.started(daemon, probe.PROC)
    return None if ticks is None else f"{daemon}.{ticks}"


def _earlier(environ: Mapping[str, str], daemon: str | None) -> bytes | None:
    """Refusals the sender decided after an earlier hook under this daemon exited, said once. No
    hook knows which window it runs for, so the line names where and when instead."""
    from lich_hooks.hook.shared.codex import refused

    try:  # a record another release wrote (a cause this one does not know): said by none
        records = refused.untold(environ, daemon) if daemon else []
        if not records:
            return None
        more = f" (and {len(records) - 1} before it)" if len(records) > 1 else ""
        where, said = recorded(records[0])
    except Exception:
        return None
    return _message(
        f"an earlier Codex conversation ({where}){more} was not linked to its card: {said}"
    )


def recorded(record: Mapping[str, object]) -> tuple[str, str]:
    """Where and when a refused conversation started, and why it was refused (refused.py)."""
    when = time.strftime("%H:%M", time.localtime(float(str(record.get("at") or 0))))
    said = told(str(record.get("decision")), record.get("cause"))
    return f"started {when} in {record.get('cwd') or 'an unknown folder'}", said


def _ours(ctx: Context) -> Callable[[int], bool]:
    """A sender's own request among the daemon's peers (nudge.py), looked up only for a peer no
    codex client holds."""

    def check(inode: int) -> bool:
        from lich_hooks.hook.shared.codex import nudge

        return nudge.ours(ctx.environ)(inode)

    return check


def who_runs(start: int | None = None, proc: str = probe.PROC) -> decide.Runner:
    chain = ancestors(os.getppid() if start is None else start, proc, decide.is_codex)
    return decide.runner(chain)


def find_card(
    daemon: int,
    proc: str = probe.PROC,
    seen: list[decide.Client] | None = None,
    ours: Callable[[int], bool] | None = None,
) -> decide.Attribution | None:
    """The refusals that need no log (decide.gate), or None: the log decides. The clients read
    are added to `seen`; `ours`: a peer that is a sender's request (nudge.py)."""
    if not probe.can_list_clients(proc):
        return decide.Attribution(
            UNSUPPORTED,
            f"codex app-server {daemon} runs this hook and this system offers no way to "
            "find the client it runs it for (start cards with `codex --no-daemon`)",
        )
    try:
        clients, unaccounted = probe.snapshot(daemon, proc, ours)
    except probe.ProbeError as error:
        return decide.Attribution(PROBE_FAILED, f"codex app-server {daemon}: {error}")
    if seen is not None:
        seen.extend(clients)
    return decide.gate(clients, unaccounted)


def log_home(environ: Mapping[str, str]) -> str | decide.Attribution:
    """CODEX_HOME, where the daemon's log may be trusted (evidence.trusted), or why not."""
    from lich_hooks.base.homes import codex_home
    from lich_hooks.hook.shared.codex import evidence

    home = codex_home(environ)
    if home is None:
        return decide.Attribution(decide.NO_EVIDENCE, "no home directory to find Codex's log in")
    try:
        evidence.trusted(home)
    except evidence.Untrusted as error:
        why = f"codex app-server's log: {error}"
        return decide.Attribution(decide.UNTRUSTED, why, cause=str(error))
    return home


def from_log(
    home: str,
    daemon: int,
    thread: str,
    clients: list[decide.Client],
    hook_started: float,
    environ: Mapping[str, str],
    note: Callable[..., None] | None = None,
) -> decide.Attribution:
    """`note`: the run log's fields, given how many requests the sender made the daemon log
    (`codex_requests`) and why one failed (`codex_request_failed`)."""
    from lich_hooks.hook.shared.codex import evidence, nudge

    starts = {c.pid: c.started for c in clients if c.started is not None}
    asked = nudge.Nudger(environ, home, daemon)
    try:
        rows, seen, since, connects, pending, opened, floor = evidence.gather(
            home, daemon, thread, hook_started, starts, nudge=asked
        )
    except evidence.Unreadable as error:  # made untrusted since the hook: refused all the same
        return decide.Attribution(decide.NO_EVIDENCE, f"codex app-server {daemon}: {error}")
    finally:
        asked.close()
        if note is not None:
            note(codex_requests=asked.sent)
            if asked.failed is not None:
                note(codex_request_failed=asked.failed)
    held = ties(environ, identity(daemon), clients, (seen, since, connects, opened, floor))
    return decide.from_evidence(rows, clients, held, seen, hook_started, pending)


# Ties proven (decide.tie), kept for later hooks once Codex dropped the rows that proved them: one
# small private file per tie in the state directory, trusted as it is, naming the daemon's life
# (identity) and the TUI's (pid, own connect row), pruned by age and count (prune.py's RULES).
# One gone costs a report, never a card (docs/harnesses.md, Codex).
TIES = ("codex-ties",)


def ties(
    environ: Mapping[str, str],
    daemon: str | None,
    clients: list[decide.Client],
    log: tuple[float, float, list[decide.Connect], dict[int, decide.Opened], float],
) -> dict[int, decide.Tie]:
    """pid -> decide.tie on `log` (seen, since, connects, opened, floor) with the ties kept for
    this daemon's life, each one held kept again (a live TUI's stays the newest)."""
    from lich_hooks.base.homes import file_key
    from lich_hooks.base.transport import encode
    from lich_hooks.hook import state
    from lich_hooks.hook.payload import loads_object

    seen, since, connects, opened, floor = log
    found, _ = state.entries(environ, TIES, 0.0, 512, 1000, 200) if daemon else ([], True)
    known: dict[tuple[int, float], int] = {}
    for record in (loads_object(data) or {} for _, data in found):
        pid, at, tie = (record.get(key) for key in ("pid", "connect", "connection"))
        if record.get("daemon") == daemon and isinstance(pid, int) and isinstance(at, float):
            if isinstance(tie, int):
                known[(pid, at)] = tie
    held = {c.pid: decide.tie(c, seen, since, connects, opened, floor, known) for c in clients}
    for client in clients if daemon else ():
        at, tie = decide.connected_at(client, connects), held[client.pid]
        if at is not None and isinstance(tie, int):
            record = {"daemon": daemon, "pid": client.pid, "connect": at, "connection": tie}
            try:
                state.write(
                    environ, TIES, file_key(f"{daemon}-{client.pid}-{at!r}"), encode(record)
                )
            except OSError:
                break  # best-effort: the run log has the tie
    return held
