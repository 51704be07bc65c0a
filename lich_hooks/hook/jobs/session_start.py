"""session-start: tell lich which provider conversation runs in the card (docs/session-start.md)."""

from __future__ import annotations

import time

from lich_hooks.hook.outcome import PENDING, Context, Outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.base.safefile import Dir
    from lich_hooks.hook.payload import Payload
    from lich_hooks.hook.shared.core import Card, Guard
    from lich_hooks.hook.state import Where

ENDPOINT = "session-start"


def body(card: str, provider_session_id: str, provider: str) -> dict[str, object]:
    return {"session_id": card, "provider_session_id": provider_session_id, "provider": provider}


def run(ctx: Context) -> Outcome:
    # The claim's time (hook/claim.py): the two routes' hooks start ms apart, whatever either
    # one's sender waits for later (Codex's daemon log: seconds).
    fired = time.time()
    if ctx.route.shared is None:  # nobody to ask: the card is the hook's own
        return _report(ctx, ctx.env, True, fired)
    from lich_hooks.hook import shared

    return _answered(ctx, shared.card(ctx), fired)


def _answered(ctx: Context, found: Card, fired: float) -> Outcome:
    if found.refusal is not None:
        return found.refusal
    later = found.later
    if later is not None:  # decided from evidence the detached sender waits for
        return Outcome(PENDING, later=lambda: _answered(ctx, later(), fired), stdout=found.say)
    assert found.env is not None
    return _report(ctx, found.env, found.own, fired, found.guard)


def _report(
    ctx: Context, env: LichEnv, own: bool, fired: float, guard: Guard | None = None
) -> Outcome:
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
    card = env.card

    def settled() -> Outcome:
        claimed, now = _settled(ctx, payload, card, conversation, guard, fired)
        if isinstance(claimed, Outcome):
            return claimed
        # Every taken report is remembered, not only the deduped ones: a Claude Code run in the
        # same card replaces the id lich holds, and a Crush resuming its old one must then report.
        mark = None if guard is None else guard(card, conversation)
        return _sent(ctx, card, conversation, None if own else env, mark, claimed, now)

    if ctx.route.deduped:  # most calls are already reported: decided here, at no fork's cost
        return settled()
    # Reported every time: the claim and the records print nothing, so the detached sender
    # does them and the harness does not wait for the state directory (docs/performance.md).
    return Outcome("report", later=settled)


def _remembered(ctx: Context, conversation: str) -> str:
    """What the card's record holds once this report is taken."""
    return f"{ctx.provider}\n{conversation}"


def _settled(
    ctx: Context,
    payload: Payload,
    card: str,
    conversation: str,
    guard: Guard | None,
    fired: float,
) -> tuple[Outcome | bool | None, float]:
    """The state phase: the other route's claim, the dedupe and this id's claim, with the state
    directory opened once for their calls (made only where a claim needs it); and the time the
    claim was taken at. Here, not at the top: outside lich (the commonest no-op) never reads the
    state."""
    from lich_hooks.hook import claim, state
    from lich_hooks.hook.state import session_record

    deduped = ctx.route.deduped
    remembered = _remembered(ctx, conversation)
    claims = claim.claims(ctx)
    opened: Dir | None
    try:
        opened = state.open_root(ctx.environ, create=deduped or claims)
    except OSError:
        opened = None
    try:
        where = ctx.environ if opened is None else opened
        # A /resume is its own prompt to claim; startup, /clear and compact are not.
        source, prompt = payload.text("source") or "", payload.text("prompt_id") or ""
        identity = f"{conversation}\n{source}\n{prompt}"
        if claims and not claim.claim(ctx, identity, card, now=fired, where=where):
            return Outcome("other-route-acts"), 0.0
        now = time.time()
        claimed = _take(where, card, remembered, deduped, now)
        if isinstance(claimed, Outcome) and claimed.decision == "already-reported":
            mark = None if guard is None else guard(card, conversation)
            if mark is not None:
                session_record.mark(where, card, remembered, mark)
    finally:
        if opened is not None:
            opened.close()
    return claimed, now


def _sent(
    ctx: Context,
    card: str,
    conversation: str,
    env: LichEnv | None,
    mark: str | None,
    claimed: bool | None,
    now: float,
) -> Outcome:
    """The report, its record kept after lich's 204 and its claim released when the send ends;
    `env`: the card found when it is not the hook's own."""
    from lich_hooks.hook.state import session_record

    environ = ctx.environ
    remembered = _remembered(ctx, conversation)

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
        body=body(card, conversation, ctx.provider),
        on_taken=remember,
        on_end=release if claimed else None,
        env=env,
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


def _take(
    root: Where, card: str, remembered: str, deduped: bool, now: float
) -> Outcome | bool | None:
    """The Outcome that says why not to report, or a claim taken (True), or none (None)."""
    from lich_hooks.hook.state import session_record

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
