"""What Claude Code reads back (docs/agent-cards.md). A hook cannot hand it an Agent result, so
where lich has (or may have) the task it is a deny that says so; only an open that certainly failed
lets the native agent run, with a toast."""

from __future__ import annotations

from lich_hooks.hook.jobs.agent_cards import lich_process
from lich_hooks.hook.jobs.agent_cards.text import text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.hook.jobs.agent_cards.eligibility import Call
    from lich_hooks.hook.jobs.agent_cards.record import Worker

RUNNING = ("pending", "unanswered")
NEVER_REACHED = ("unread", "undelivered")


def _encode(value: dict[str, object]) -> bytes:
    import json

    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from the payload: escape it instead
        return json.dumps(value).encode("ascii")


def deny(reason: str, context: str | None = None, person: str | None = None) -> bytes:
    """`person`: systemMessage; `reason`: both read it; `context`: the model's only."""
    out: dict[str, object] = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }
    if context:
        out["additionalContext"] = context
    verdict: dict[str, object] = {"hookSpecificOutput": out}
    if person:
        verdict["systemMessage"] = person
    return _encode(verdict)


def context_reaches_model(environ: Mapping[str, str]) -> bool:
    """From 2.1.269, which also sets CLAUDE_CODE_SESSION_ATTENDED (docs/harnesses.md)."""
    return "CLAUDE_CODE_SESSION_ATTENDED" in environ


def toast(lang: str, description: str, why: str, **values: object) -> bytes:
    reason = text(lang, why, **values)
    return _encode({"systemMessage": text(lang, "toast", description=description, why=reason)})


class Verdict:
    __slots__ = ("decision", "stdout", "worker")

    def __init__(self, decision: str, stdout: bytes, worker: Worker | None = None) -> None:
        self.decision = decision
        self.stdout = stdout
        self.worker = worker


def _str(session: dict[str, object], key: str) -> str | None:
    value = session.get(key)
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def for_open(
    result: lich_process.Ran,
    call: Call,
    branch: str | None,
    lang: str,
    now: float,
    context_seen: bool = True,
) -> Verdict:
    """docs/agent-cards.md, a row per `lich open` outcome: first those where lich holds no task
    (or may not), then by the delivery's status: running (the worker is recorded), answered,
    never reached, or a status this release does not know."""

    def say(key: str, **values: object) -> str:
        return text(lang, key, **values)

    def denied(
        decision: str,
        reason: str,
        context: str | None = None,
        person: str | None = None,
        worker: Worker | None = None,
    ) -> Verdict:
        """Before 2.1.269 additionalContext never reaches the model: it joins the reason."""
        if context and not context_seen:
            reason, context = f"{reason}\n\n{context}", None
        return Verdict(decision, deny(reason, context, person), worker)

    on_branch = say("on_branch", branch=branch) if branch else ""
    if result.kind == lich_process.INTERRUPTED:
        reason = say("interrupted", on_branch=on_branch)
        return denied("deny:interrupted", reason, say("interrupted_context"))
    desc = call.description
    if result.kind == lich_process.LAUNCH_ERROR:
        return Verdict(
            "toast:launch-error", toast(lang, desc, "why_launch", error=result.error or "?")
        )
    if result.kind == lich_process.TIMEOUT:
        seconds = result.error or f"{lich_process.OPEN_SECONDS:g}"
        return Verdict("toast:timeout", toast(lang, desc, "why_timeout", seconds=seconds))
    session = lich_process.parse_object(result.stdout)
    code = "?" if result.code is None else result.code
    if session is None:
        detail = result.stderr_line or say("why_no_json_detail", code=code)
        return Verdict("toast:no-json", toast(lang, desc, "why_no_json", detail=detail))
    name = _str(session, "name") or _str(session, "id") or "?"
    label = _str(session, "label") or name
    path = _str(session, "path") or call.cwd or "?"
    delivery = session.get("delivery")
    if not isinstance(delivery, dict):
        detail = result.stderr_line or say("why_not_delivered_detail", code=code)
        return Verdict(
            "toast:not-delivered",
            toast(lang, desc, "why_not_delivered", label=label, detail=detail),
        )
    status = delivery.get("status")
    status = status if isinstance(status, str) else str(status)
    if status == "answered":
        answer = delivery.get("answer")
        answer = answer if isinstance(answer, str) else ""
        if branch:
            done = say("done_isolated", branch=branch, path=path)
        else:
            done = say("done_shared", path=path)
        # The report goes last: past 10,000 characters the model sees only the first 2 KB
        context = say("answered_context", label=label, name=name, answer=answer, where=done)
        return denied(
            "deny:answered", say("answered"), context, say("answered_person", label=label)
        )
    if status in NEVER_REACHED:
        reason = say("never_reached", label=label, on_branch=on_branch, status=status)
        return denied(f"deny:{status}", reason)
    if status not in RUNNING:
        reason = say("unknown_status", label=label, on_branch=on_branch, status=status)
        return denied("deny:other-status", reason)
    # The card runs the task: the model waits, and the worker is recorded for its answer.
    if branch:
        where = say("where_isolated", branch=branch, path=path)
    else:
        where = say("where_shared", path=path)
    context = say("pending_context", label=label, name=name, where=where)
    # TaskStop refuses ids it did not issue before PreToolUse runs (2.1.328, 2.1.332): the model
    # gets the lich command too, quoted, as it pastes it into a shell
    import shlex

    quoted = shlex.quote(name)
    stop = f"lich control {quoted} abort" if branch else f"lich close {quoted}"
    context += say("stop_hint", stop=stop)
    if status == "unanswered":
        context += say("unanswered_note")
    worker: Worker = {
        "name": name,
        "label": label,
        "id": _str(session, "id"),
        "description": call.description,
        "branch": branch,  # None: shares the asking session's checkout
        "path": path,
        "tool_use_id": call.tool_use_id,
        "when": now,
    }
    person = say("pending_person", label=label)
    return denied(f"deny:{status}", say("pending"), context, person, worker)
