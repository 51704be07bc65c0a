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


class _Words:
    """One open's words: its language and branch, and where the model reads the context."""

    __slots__ = ("branch", "context_seen", "lang", "on_branch")

    def __init__(self, lang: str, branch: str | None, context_seen: bool) -> None:
        self.lang = lang
        self.branch = branch
        self.context_seen = context_seen
        self.on_branch = text(lang, "on_branch", branch=branch) if branch else ""

    def text(self, key: str, **values: object) -> str:
        return text(self.lang, key, **values)

    def deny(self, reason: str, context: str | None = None, person: str | None = None) -> bytes:
        """Before 2.1.269 additionalContext never reaches the model: it joins the reason."""
        if context and not self.context_seen:
            return deny(f"{reason}\n\n{context}", None, person)
        return deny(reason, context, person)


def for_open(
    result: lich_process.Ran,
    call: Call,
    branch: str | None,
    lang: str,
    now: float,
    context_seen: bool = True,
) -> Verdict:
    """docs/agent-cards.md, a row per `lich open` outcome: here those where lich holds no task
    (or may not), in _delivered those that name one."""
    words = _Words(lang, branch, context_seen)
    if result.kind == lich_process.INTERRUPTED:
        reason = words.text("interrupted", on_branch=words.on_branch)
        return Verdict("deny:interrupted", words.deny(reason, words.text("interrupted_context")))
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
        detail = result.stderr_line or text(lang, "why_no_json_detail", code=code)
        return Verdict("toast:no-json", toast(lang, desc, "why_no_json", detail=detail))
    opened = _Opened(session, call.cwd)
    delivery = session.get("delivery")
    if not isinstance(delivery, dict):
        detail = result.stderr_line or text(lang, "why_not_delivered_detail", code=code)
        return Verdict(
            "toast:not-delivered",
            toast(lang, desc, "why_not_delivered", label=opened.label, detail=detail),
        )
    return _delivered(words, opened, delivery, call, now)


class _Opened:
    """The session `lich open` answered with: its name, label and checkout."""

    __slots__ = ("label", "name", "path", "session")

    def __init__(self, session: dict[str, object], cwd: str | None) -> None:
        self.session = session
        self.name = _str(session, "name") or _str(session, "id") or "?"
        self.label = _str(session, "label") or self.name
        self.path = _str(session, "path") or cwd or "?"


def _delivered(
    words: _Words, opened: _Opened, delivery: dict[str, object], call: Call, now: float
) -> Verdict:
    """The rows by the delivery's status: running (the worker is recorded), answered, never
    reached, or a status this release does not know."""
    status = delivery.get("status")
    status = status if isinstance(status, str) else str(status)
    label, name, branch = opened.label, opened.name, words.branch
    if status in RUNNING:
        return _running(words, opened, status, call, now)
    if status == "answered":
        answer = delivery.get("answer")
        answer = answer if isinstance(answer, str) else ""
        if branch:
            done = words.text("done_isolated", branch=branch, path=opened.path)
        else:
            done = words.text("done_shared", path=opened.path)
        # The report goes last: past 10,000 characters the model sees only the first 2 KB
        context = words.text("answered_context", label=label, name=name, answer=answer, where=done)
        person = words.text("answered_person", label=label)
        return Verdict("deny:answered", words.deny(words.text("answered"), context, person))
    on_branch = words.on_branch
    if status in NEVER_REACHED:
        reason = words.text("never_reached", label=label, on_branch=on_branch, status=status)
        return Verdict(f"deny:{status}", words.deny(reason))
    reason = words.text("unknown_status", label=label, on_branch=on_branch, status=status)
    return Verdict("deny:other-status", words.deny(reason))


def _running(words: _Words, opened: _Opened, status: str, call: Call, now: float) -> Verdict:
    """The card runs the task: the model waits, and the worker is recorded for its answer."""
    label, name, branch, path = opened.label, opened.name, words.branch, opened.path
    if branch:
        where = words.text("where_isolated", branch=branch, path=path)
    else:
        where = words.text("where_shared", path=path)
    context = words.text("pending_context", label=label, name=name, where=where)
    # TaskStop refuses ids it did not issue before PreToolUse runs (2.1.328, 2.1.332): the model
    # gets the lich command too, quoted, as it pastes it into a shell
    import shlex

    quoted = shlex.quote(name)
    stop = f"lich control {quoted} abort" if branch else f"lich close {quoted}"
    context += words.text("stop_hint", stop=stop)
    if status == "unanswered":
        context += words.text("unanswered_note")
    worker: Worker = {
        "name": name,
        "label": label,
        "id": _str(opened.session, "id"),
        "description": call.description,
        "branch": branch,  # None: shares the asking session's checkout
        "path": path,
        "tool_use_id": call.tool_use_id,
        "when": now,
    }
    person = words.text("pending_person", label=label)
    return Verdict(f"deny:{status}", words.deny(words.text("pending"), context, person), worker)
