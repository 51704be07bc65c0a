"""Codex's shared app-server daemon: find the card a hook reports for, or refuse.

`decide.py` holds the rules (pure, over recorded snapshots), `probe.py` reads
the system, `moves.py` keeps what one hook must tell the next. This module
joins them for the session-start job, which asks two
questions: who runs this hook (`who_runs`, a few /proc reads, on every Codex
SessionStart), and, only under the daemon, which card owns the conversation
(`find_card`). docs/harnesses.md (Codex) tells users what this means for them.
"""

from __future__ import annotations

import os

from lich_hooks.hook.shared.codex import decide, probe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.hook.shared.core import AttributionDecision

UNSUPPORTED: AttributionDecision = "codex-daemon-unsupported"
PROBE_FAILED: AttributionDecision = "codex-daemon-probe-failed"


def who_runs(start: int | None = None, proc: str = probe.PROC) -> decide.Runner:
    """OWN, DAEMON or UNKNOWN for the process tree above `start` (default: our parent)."""
    return decide.runner(probe.ancestors(os.getppid() if start is None else start, proc))


def find_card(
    daemon: int,
    cwd: str | None,
    source: str | None = "startup",
    transcript: str | None = None,
    proc: str = probe.PROC,
    session: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> decide.Attribution:
    """The card among `daemon`'s clients whose conversation runs in `cwd`, or why none.

    `source`, `transcript` and `session` are the payload's: a conversation
    that is not fresh may run in its recorded directory, whoever resumed it
    there. `environ` names the state directory that remembers, from one hook
    to the next, which clients may have moved where and which sessions were
    whose (moves.py); without it nothing is remembered (benchmarks, doctor).
    """
    # Here, not at the top: `who_runs` runs on every Codex SessionStart and Crush
    # tool call (crush_server shares the ancestry walk), and only the daemon
    # path needs the state directory behind the record.
    from lich_hooks.hook.shared.codex import moves

    if not probe.can_list_clients(proc):
        return decide.Attribution(
            UNSUPPORTED,
            f"codex app-server {daemon} runs this hook and this system offers no way to "
            "find the client it runs it for (start cards with `codex --no-daemon`)",
        )
    try:
        seen = probe.snapshot(daemon, proc)
    except probe.ProbeError as error:
        return decide.Attribution(PROBE_FAILED, f"codex app-server {daemon}: {error}")
    connected = seen.clients
    if not cwd or not os.path.isabs(cwd):
        return decide.choose(connected, cwd, source)
    want = decide.normalise(os.path.realpath(cwd))  # /proc shows cwds with symlinks resolved
    recorded = None
    if source not in decide.FRESH_SOURCES:
        recorded = _real(probe.session_cwd(transcript))
    record = moves.load(environ) if environ is not None else moves.Record([])
    if not record.usable and len({(c.lich or {}).get("LICH_SESSION_ID") for c in connected}) > 1:
        return decide.Attribution(
            decide.NO_RECORD,
            "the state directory cannot keep the record of which codex client may have moved "
            "where, and clients of several cards are connected: a match by directory proves "
            "nothing without it",
        )
    by_identity = {c.identity: c for c in connected if c.identity is not None}
    moved = {by_identity[i].pid for i in record.marked(want) if i in by_identity}
    accounted = {
        sid for sid in seen.loaded if any(i in by_identity for i in record.attributed(sid))
    }
    held = {}
    for sid, path in seen.loaded.items():
        if sid == session or sid in accounted:
            continue
        head = probe.rollout_head(path)
        if not probe.being_written(head):  # another card's conversation starting this instant
            held[sid] = _real(probe.meta_cwd(head))
    if decide.strays(held, want, session, accounted) or decide.moves(source, recorded, want):
        marked = decide.movers(connected, want)
        moved.update(c.pid for c in marked)
        if environ is not None:
            moves.mark(
                environ, want, [c.identity for c in marked if c.identity is not None], seen.loaded
            )
    found = decide.choose(connected, want, source, recorded, moved)
    if found.lich is not None and session and environ is not None:
        chosen = next((c.identity for c in connected if c.pid == found.client), None)
        if chosen is not None:
            moves.attribute(environ, session, chosen, seen.loaded)
    return found


def marked(
    clients: list[decide.Client], dirs: list[str], environ: Mapping[str, str]
) -> dict[str, set[int]]:
    """For each of `dirs`, the pids of `clients` the record marks as possibly there (doctor)."""
    from lich_hooks.hook.shared.codex import moves

    record = moves.load(environ, create=False)
    by_identity = {c.identity: c.pid for c in clients if c.identity is not None}
    return {d: {by_identity[i] for i in record.marked(d) if i in by_identity} for d in dirs}


def _real(path: str | None) -> str | None:
    return None if path is None else decide.normalise(os.path.realpath(path))
