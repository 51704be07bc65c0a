"""session-start: tell lich which provider conversation runs in the card (SPEC §3)."""

from __future__ import annotations

from lich_hooks import state
from lich_hooks.jobs.job import Context, Outcome

ENDPOINT = "session-start"

# Events that fire far more often than a conversation changes: report only an
# id lich has not yet taken for this card.
DEDUPED = {("antigravity", "PreInvocation"), ("crush", "PreToolUse")}


def body(card: str, provider_session_id: str, provider: str) -> dict[str, object]:
    return {"session_id": card, "provider_session_id": provider_session_id, "provider": provider}


def run(ctx: Context) -> Outcome:
    env = ctx.env
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
    deduped = (ctx.provider, ctx.event) in DEDUPED
    if deduped and state.last_reported(ctx.environ, env.card) == remembered:
        return Outcome("already-reported")
    card = env.card
    state.forget_reported(ctx.environ, card)

    # Every taken report is remembered, not only the deduped ones: a Claude
    # Code or Codex run in the same card replaces the id lich holds, and a Crush
    # or Antigravity resuming its old conversation there must then report again.
    def remember() -> None:
        state.remember_reported(ctx.environ, card, remembered)

    return Outcome("report", endpoint=ENDPOINT, body=report, on_taken=remember)
