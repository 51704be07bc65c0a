"""session-start: tell lich which provider conversation runs in the card
(docs/session-start.md)."""

from __future__ import annotations

import time

from lich_hooks.base import harnesses as harness
from lich_hooks.base.lichenv import LichEnv
from lich_hooks.hook.outcome import Context, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

    from lich_hooks.base.safefile import Dir
    from lich_hooks.hook.payload import Payload
    from lich_hooks.hook.shared.core import Attribution, Runner
    from lich_hooks.hook.state import Where

ENDPOINT = "session-start"


def body(card: str, provider_session_id: str, provider: str) -> dict[str, object]:
    return {"session_id": card, "provider_session_id": provider_session_id, "provider": provider}


def run(ctx: Context) -> Outcome:
    env = ctx.env
    own = True
    if ctx.route.shared is not None:
        found = ATTRIBUTIONS[ctx.route.shared](ctx)
        if isinstance(found, Outcome):
            return found
        if found is not None:
            env, own = found, False
    if not env.can_report:
        return Outcome("outside-lich")
    assert env.card is not None
    payload = ctx.payload()
    if payload is None:
        return Outcome("bad-input")
    conversation = payload.session_id
    if conversation is None:
        return Outcome("no-session-id")
    report = body(env.card, conversation, ctx.provider)
    remembered = f"{ctx.provider}\n{conversation}"
    deduped = ctx.route.deduped
    environ = ctx.environ
    card = env.card
    # Here, not at the top: outside lich (the commonest no-op) never reads the state.
    from lich_hooks.hook import claim, state
    from lich_hooks.hook.jobs import session_record

    # The state directory opened once for this run's calls (made only where a claim
    # needs it); when it cannot be, each call finds that out for itself.
    claims = claim.claims(ctx)
    opened: Dir | None
    try:
        opened = state.open_root(environ, create=deduped or claims)
    except OSError:
        opened = None
    try:
        where = environ if opened is None else opened
        # /clear and resume start another conversation, compact repeats this one: each
        # firing is claimed once between the plugin and an `install` entry (hook/claim.py).
        identity = f"{conversation}\n{payload.text('source') or ''}"
        if claims and not claim.claim(ctx, identity, card, where=where):
            return Outcome("other-route-acts")
        claimed = _take(where, card, remembered, deduped)
        if isinstance(claimed, Outcome) and claimed.decision == "already-reported":
            mark = _guard_mark(ctx, own, card, conversation)
            if mark is not None:
                session_record.mark(where, card, remembered, mark)
    finally:
        if opened is not None:
            opened.close()
    if isinstance(claimed, Outcome):
        return claimed

    # Every taken report is remembered, not only the deduped ones: a Claude
    # Code or Codex run in the same card replaces the id lich holds, and a Crush
    # or Antigravity resuming its old conversation there must then report again.
    mark = _guard_mark(ctx, own, card, conversation)

    def remember() -> None:
        session_record.remember_reported(environ, card, remembered)
        if mark is not None:
            session_record.mark(environ, card, remembered, mark)

    def release() -> None:
        # After `remember` on a 204; on a failure the next call reports again.
        session_record.release(environ, card, remembered)

    return Outcome(
        "report",
        endpoint=ENDPOINT,
        body=report,
        on_taken=remember,
        on_end=release if claimed else None,
        env=None if own else env,
    )


def _guard_mark(ctx: Context, own: bool, card: str, conversation: str) -> str | None:
    """The Crush guard's mark for this report, in Crush's local mode (its own card)."""
    if not own or ctx.route.shared != harness.CRUSH_SERVER:
        return None
    from lich_hooks.hook.shared import crush

    return crush.guard_mark(ctx.environ, card, conversation)


def _take(root: Where, card: str, remembered: str, deduped: bool) -> Outcome | bool | None:
    """This run's turn to report `remembered` for the card, or the Outcome that says why
    not; a claim taken (True), none needed or none possible (None)."""
    from lich_hooks.hook.jobs import session_record

    if deduped and session_record.last_reported(root, card) == remembered:
        return Outcome("already-reported")
    claimed = None
    if deduped:
        # One report per id in flight: a Crush turn fires several tool calls
        # within the ~100 ms a report takes, and the report in flight counts as
        # taken for them until its sender ends (and releases the claim).
        claimed = session_record.claim(root, card, remembered, time.time())
        if claimed is False:
            return Outcome("report-in-flight")
        if claimed and session_record.last_reported(root, card) == remembered:
            session_record.release(root, card, remembered)  # a sender finished in between
            return Outcome("already-reported")
    session_record.forget_reported(root, card)
    return claimed


def codex_card(ctx: Context) -> LichEnv | Outcome | None:
    """Under Codex's shared daemon, the card that owns the conversation (or a refusal).

    None: a codex client runs the hook as its child, so the hook's own
    environment is the card's, as on every other harness. Under the daemon the
    hook's own LICH_* belong to whichever TUI started the daemon and are never
    used; the card comes from the connected client TUI working in the
    payload's cwd (lich_hooks/hook/shared/codex/decide.py), or nothing is sent.
    """
    from lich_hooks.hook.shared import codex as codex_daemon

    started = time.monotonic()
    shared = _shared_runner(ctx, codex_daemon.who_runs(), "codex")
    if not isinstance(shared, tuple):
        return shared
    pid, payload = shared
    found = codex_daemon.find_card(
        pid,
        payload.text("cwd"),
        payload.text("source"),
        payload.transcript_path,
    )
    return _attributed(ctx, found, started)


def crush_card(ctx: Context) -> LichEnv | Outcome | None:
    """Under a `crush server`, the card that owns the conversation (or a refusal).

    None: a crush TUI or `crush run` in its default (local) mode runs the
    hook as its child, so the hook's own environment is the card's. Under the
    server the hook's own LICH_* are the first client's and are never used:
    the server's workspace at the payload's cwd, holding its session, and
    every client working there must name one card
    (lich_hooks/hook/shared/crush/decide.py), or nothing is sent.
    """
    from lich_hooks.hook.shared import crush as crush_server

    started = time.monotonic()
    shared = _shared_runner(ctx, crush_server.who_runs(), "crush")
    if not isinstance(shared, tuple):
        return shared
    pid, payload = shared
    conversation = payload.session_id
    if conversation is None:
        return Outcome("no-session-id")
    # Dedupe first: a conversation this server's hooks already reported costs what the
    # local path costs (no socket, no /proc walk). Keyed by the server process's life,
    # in which a workspace keeps the environment of its first client, so only that card
    # could be named again (docs/harnesses.md, Crush).
    from lich_hooks.hook import procfs
    from lich_hooks.hook.jobs import session_record

    remembered = f"{ctx.provider}\n{conversation}"
    life = procfs.started(pid)
    name = None if life is None else session_record.served_name(pid, life, remembered)
    if name is not None:
        known = _served_already(ctx, pid, name, remembered)
        if known is not None:
            return known
    found = crush_server.find_card(pid, ctx.environ, payload.text("cwd"), conversation)
    if name is not None:
        card = (found.lich or {}).get("LICH_SESSION_ID")
        session_record.serve(ctx.environ, name, card, found.decision)
    return _attributed(ctx, found, started)


def _served_already(ctx: Context, pid: int, name: str, remembered: str) -> Outcome | None:
    """`already-reported` when `remembered` went to a card whose last report it is, the
    refusal when it was refused within REFUSAL_SECONDS, else None: both records read
    through one opening of the state directory."""
    from lich_hooks.hook import state
    from lich_hooks.hook.jobs import session_record

    try:
        root = state.open_root(ctx.environ, create=False)
    except OSError:
        return None
    try:
        card, refused = session_record.served(root, name, time.time())
        if refused is not None:
            within = f"within {session_record.REFUSAL_SECONDS:g} s"
            ctx.log.set(attribution=f"refused under crush server {pid} {within}: {refused}")
            return Outcome(refused)
        if card is None or session_record.last_reported(root, card) != remembered:
            return None
    finally:
        root.close()
    ctx.log.set(attribution=f"already reported for card {card} under crush server {pid}")
    return Outcome("already-reported")


def _shared_runner(
    ctx: Context, runner: Runner, harness_name: Literal["codex", "crush"]
) -> tuple[int, Payload] | Outcome | None:
    """What who_runs() found, as the attribution needs it: None when the harness
    runs the hook as its own child (the hook's own card), a refusal when nothing
    above the hook can be told apart, else the shared process's pid and the payload."""
    from lich_hooks.hook.shared import core

    if runner.kind == core.OWN:
        return None
    ctx.log.set(**{f"{harness_name}_runner": runner.why})
    if runner.kind == core.UNKNOWN:
        ctx.log.debug(f"not reporting: {runner.why}")
        return Outcome(f"{harness_name}-runner-unknown")
    payload = ctx.payload()
    if payload is None:
        return Outcome("bad-input")
    assert runner.pid is not None
    return runner.pid, payload


def _attributed(ctx: Context, found: Attribution, started: float) -> LichEnv | Outcome:
    """The chosen card's environment, or the refusal; the run log says which and what it cost."""
    ctx.log.set(attribution=found.why, attribution_ms=round((time.monotonic() - started) * 1000, 2))
    ctx.log.debug(found.why)
    if found.lich is None:
        return Outcome(found.decision)
    return LichEnv(found.lich)


# harness.py's shared-process names -> who the report is for: None (the hook's
# own card), another card's LichEnv, or the Outcome that refuses to guess.
ATTRIBUTIONS: dict[str, Callable[[Context], LichEnv | Outcome | None]] = {
    harness.CODEX_DAEMON: codex_card,
    harness.CRUSH_SERVER: crush_card,
}
