"""Codex's shared app-server daemon: find the card a hook reports for, or refuse; joins
decide.py's rules and probe.py's reading (docs/harnesses.md, Codex)."""

from __future__ import annotations

import os
import time

from lich_hooks.hook.shared import core
from lich_hooks.hook.shared.codex import decide, probe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.hook.outcome import Context, Outcome
    from lich_hooks.hook.shared.core import AttributionDecision

# The one line Codex's TUI shows for a SessionStart (`↳ Hook · …`).
NOTICE = (
    b'{"systemMessage":"lich: this conversation is not linked to its card while several '
    b"cards share Codex's background daemon; start Codex in lich cards with "
    b'`codex --no-daemon`"}'
)
UNSUPPORTED: AttributionDecision = "codex-daemon-unsupported"
PROBE_FAILED: AttributionDecision = "codex-daemon-probe-failed"
# refusals the daemon's log cannot overturn: a peer no client read, no way to look
REFUSED = (decide.UNACCOUNTED, UNSUPPORTED, PROBE_FAILED)


def card(ctx: Context) -> LichEnv | Outcome | Callable[[], LichEnv | Outcome] | None:
    """The conversation's card, a refusal, or how the detached sender finds it in the daemon's
    log; None: a codex client runs the hook as its child."""
    started, hook_started = time.monotonic(), time.time()
    shared = core.shared_runner(ctx, who_runs(), "codex")
    if not isinstance(shared, tuple):
        return shared
    pid, payload = shared
    source, thread = payload.text("source"), payload.session_id
    clients: list[decide.Client] = []
    found = find_card(pid, payload.text("cwd"), source, payload.transcript_path, seen=clients)
    if found.decision not in REFUSED and thread and any(c.lich for c in clients):

        def later() -> LichEnv | Outcome:
            return core.attributed(
                ctx, from_log(ctx.environ, pid, thread, clients, hook_started), started
            )

        return later
    result = core.attributed(ctx, found, started)
    if found.lich is None and (found.lich_seen or ctx.env.can_report) and source != "compact":
        # inside lich: the person sees why and the fix (a compaction was told already)
        from lich_hooks.hook.outcome import Outcome

        if isinstance(result, Outcome):
            result.stdout = NOTICE
    return result


def who_runs(start: int | None = None, proc: str = probe.PROC) -> decide.Runner:
    return decide.runner(probe.ancestors(os.getppid() if start is None else start, proc))


def find_card(
    daemon: int,
    cwd: str | None,
    source: str | None = "startup",
    transcript: str | None = None,
    proc: str = probe.PROC,
    seen: list[decide.Client] | None = None,
) -> decide.Attribution:
    """The clients read are added to `seen`."""
    if not probe.can_list_clients(proc):
        return decide.Attribution(
            UNSUPPORTED,
            f"codex app-server {daemon} runs this hook and this system offers no way to "
            "find the client it runs it for (start cards with `codex --no-daemon`)",
        )
    try:
        snap = probe.snapshot(daemon, proc)
    except probe.ProbeError as error:
        return decide.Attribution(PROBE_FAILED, f"codex app-server {daemon}: {error}")
    if seen is not None:
        seen.extend(snap.clients)
    want, recorded = cwd, None
    if cwd and os.path.isabs(cwd):
        want = decide.normalise(os.path.realpath(cwd))  # /proc shows cwds symlinks resolved
        at = probe.session_cwd(transcript) if source not in decide.FRESH_SOURCES else None
        recorded = None if at is None else decide.normalise(os.path.realpath(at))
    found = decide.attribute(snap.clients, want, source, recorded, snap.unaccounted)
    found.lich_seen = found.lich is None and any(c.lich for c in snap.clients)
    return found


def from_log(
    environ: Mapping[str, str],
    daemon: int,
    thread: str,
    clients: list[decide.Client],
    hook_started: float,
) -> decide.Attribution:
    from lich_hooks.base.homes import codex_home
    from lich_hooks.hook.shared.codex import evidence

    home = codex_home(environ)
    if home is None:
        return decide.Attribution(decide.NO_EVIDENCE, "no home directory to find Codex's log in")
    starts = {
        c.pid: c.started
        for c in clients
        if c.started is not None and c.lich and decide.switcher(c.argv) is None
    }
    try:
        rows, startups, seen, since, own, begun = evidence.gather(
            home, daemon, thread, hook_started, starts
        )
    except evidence.Unreadable as error:
        return decide.Attribution(decide.NO_EVIDENCE, f"codex app-server {daemon}: {error}")
    return decide.from_evidence(rows, startups, clients, seen, hook_started, since, own, begun)
