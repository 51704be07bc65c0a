"""session-start: tell lich which provider conversation runs in the card (docs/session-start.md)."""

from __future__ import annotations

import time

from lich_hooks.hook.outcome import Context, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.base.safefile import Dir
    from lich_hooks.hook.state import Where

ENDPOINT = "session-start"


def body(card: str, provider_session_id: str, provider: str) -> dict[str, object]:
    return {"session_id": card, "provider_session_id": provider_session_id, "provider": provider}


def run(ctx: Context) -> Outcome:
    env = ctx.env
    own = True
    if ctx.route.shared is not None:
        from lich_hooks.hook import shared

        found = shared.card(ctx)
        if isinstance(found, Outcome):
            return found
        if callable(found):  # decided from evidence the detached sender waits for
            later = found
            return Outcome("evidence-pending", later=lambda: _resolved(ctx, later()))
        if found is not None:
            env, own = found, False
    return _report(ctx, env, own)


def _resolved(ctx: Context, found: LichEnv | Outcome) -> Outcome:
    return found if isinstance(found, Outcome) else _report(ctx, found, False)


def _report(ctx: Context, env: LichEnv, own: bool) -> Outcome:
    if not env.can_report:
        if own and env.port is not None and env.card is not None:
            return scrubbed(ctx)
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

    # The state directory opened once for this run's calls (made only where a claim needs it).
    claims = claim.claims(ctx)
    opened: Dir | None
    try:
        opened = state.open_root(environ, create=deduped or claims)
    except OSError:
        opened = None
    try:
        where = environ if opened is None else opened
        # A /resume is its own prompt to claim; startup, /clear and compact are not.
        source, prompt = payload.text("source") or "", payload.text("prompt_id") or ""
        identity = f"{conversation}\n{source}\n{prompt}"
        if claims and not claim.claim(ctx, identity, card, where=where):
            return Outcome("other-route-acts")
        now = time.time()
        claimed = _take(where, card, remembered, deduped, now)
        if isinstance(claimed, Outcome) and claimed.decision == "already-reported":
            mark = _guard_mark(ctx, own, card, conversation)
            if mark is not None:
                session_record.mark(where, card, remembered, mark)
    finally:
        if opened is not None:
            opened.close()
    if isinstance(claimed, Outcome):
        return claimed

    # Every taken report is remembered, not only the deduped ones: a Claude Code run in the same
    # card replaces the id lich holds, and a Crush resuming its old one must then report again.
    mark = _guard_mark(ctx, own, card, conversation)

    def remember() -> None:
        session_record.remember_reported(environ, card, remembered)
        if mark is not None:
            session_record.mark(environ, card, remembered, mark)

    def release() -> None:
        # After `remember` on a 204; on a failure the next call reports again.
        session_record.release(environ, card, remembered, now)

    return Outcome(
        "report",
        endpoint=ENDPOINT,
        body=report,
        on_taken=remember,
        on_end=release if claimed else None,
        env=None if own else env,
        send_by=now + session_record.SEND_SECONDS if claimed else None,
    )


def scrubbed(ctx: Context) -> Outcome:
    """The harness stripped LICH_TOKEN: the person is told once (docs/transport.md)."""
    import json

    from lich_hooks.base.harnesses import REGISTRATIONS
    from lich_hooks.hook import claim

    registration = REGISTRATIONS.get(ctx.provider)
    if registration is None or registration.scrub is None:
        return Outcome("outside-lich")
    payload = ctx.payload()
    if payload is None:
        return Outcome("bad-input")
    identity = f"{payload.session_id}\n{payload.text('source')}\n{payload.text('prompt_id')}"
    if not claim.claim(ctx, f"no-token\n{identity}"):
        return Outcome("other-route-acts")
    line = json.dumps({"systemMessage": registration.scrubbed(ctx.environ)}) + "\n"
    return Outcome("token-scrubbed", stdout=line.encode())


def _guard_mark(ctx: Context, own: bool, card: str, conversation: str) -> str | None:
    from lich_hooks.base import harnesses

    if not own or ctx.route.shared != harnesses.CRUSH_SERVER:
        return None
    from lich_hooks.hook.shared import crush

    return crush.guard_mark(ctx.environ, card, conversation)


def _take(
    root: Where, card: str, remembered: str, deduped: bool, now: float
) -> Outcome | bool | None:
    """The Outcome that says why not to report, or a claim taken (True), or none (None)."""
    from lich_hooks.hook.jobs import session_record

    if deduped and session_record.last_reported(root, card) == remembered:
        return Outcome("already-reported")
    claimed = None
    if deduped:
        # One report per id in flight: a Crush turn fires several tool calls within one report
        claimed = session_record.claim(root, card, remembered, now)
        if claimed is False:
            return Outcome("report-in-flight")
        if claimed and session_record.last_reported(root, card) == remembered:
            session_record.release(root, card, remembered, now)  # a sender finished meanwhile
            return Outcome("already-reported")
    session_record.forget_reported(root, card)
    return claimed
