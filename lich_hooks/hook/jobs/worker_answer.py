"""Worker answer: a lich subagent worker's last message answers its task (docs/worker-answer.md).
The checks run in cost order: a Stop outside a worker decides from the environment alone."""

from __future__ import annotations

from lich_hooks.hook.outcome import Context, Outcome

ENDPOINT = "mod/answer"

MAX_UNITS = 16_000  # UTF-16 code units, as lich (JavaScript) counts them
MARKER = "\n[truncated]"
MAX_BODY = 64 * 1024 - 1  # lich refuses (413) a body over 64 KiB

# JSON bytes of a body around its two strings: {"session_id":"…","text":"…"}
_ENVELOPE = len('{"session_id":"","text":""}')
# Characters a JSON encoder writes as a two-byte escape; the other C0 controls take six.
_SHORT_ESCAPES = '"\\\b\t\n\f\r'
_LONG_ESCAPES = tuple(chr(c) for c in range(0x20) if chr(c) not in _SHORT_ESCAPES)


def run(ctx: Context) -> Outcome:
    env = ctx.env
    if not env.can_report:
        return Outcome("outside-lich")
    if not env.is_worker:
        return Outcome("not-worker")
    from lich_hooks.hook import interactive

    evidence = interactive.check(ctx.environ)
    ctx.log.set(interactive=evidence.why)
    if not evidence.interactive:
        return Outcome("not-interactive")
    payload = ctx.payload()
    if payload is None:
        return Outcome("bad-input")
    if payload.get("agent_id") not in (None, ""):
        return Outcome("subagent-stop")
    background = payload.get("background_tasks")
    if isinstance(background, list) and background:
        ctx.log.set(background_tasks=len(background))
        return Outcome("background-work")

    message = payload.get("last_assistant_message")
    if message is None:
        # An older Claude Code: no field at all (or null). The transcript holds it.
        from lich_hooks.hook.jobs import transcript

        path = payload.transcript_path
        path = transcript.expand(path, ctx.environ) if path else None
        after = _previous_stop(ctx, payload.session_id or "")
        found, waited = (
            transcript.settled(path, after=after) if path else (transcript.Found("unreadable"), 0)
        )
        ctx.log.set(transcript=found.kind, transcript_wait_ms=waited)
        if found.earlier:
            ctx.log.set(transcript_earlier=found.earlier)
        if found.kind == transcript.API_ERROR:
            return Outcome("api-error")  # what StopFailure reports: nothing
        message = found.text
    assert env.card is not None
    report = body(env.card, message)
    if report is None:
        return Outcome("too-large")
    from lich_hooks.base.homes import stamp
    from lich_hooks.hook import claim

    # The turn: its prompt's id (its answer where there is none: hook/claim.py).
    turn = payload.text("prompt_id") or stamp(report)
    if not claim.claim(ctx, f"{payload.session_id}\n{turn}"):
        return Outcome("other-route-acts")
    return Outcome(
        "unanswered" if "unanswered" in report else "answer", endpoint=ENDPOINT, body=report
    )


def _previous_stop(ctx: Context, session: str) -> float | None:
    """When this route's run of the session's previous Stop began; this one's kept for the next."""
    import time

    from lich_hooks.hook import claim
    from lich_hooks.hook.state import stops

    previous, kept = stops.swap(ctx.environ, stop_name(claim.route(), session), time.time())
    ctx.log.set(previous_stop=previous if previous is None else round(previous, 3))
    if not kept:
        ctx.log.set(previous_stop_kept=False)
    return previous


def stop_name(route: str, session: str) -> str:
    """Per route: the other route's run of this same Stop is no previous Stop. Per session, not
    card: the order it proves is the transcript's."""
    from lich_hooks.base.homes import stamp

    return stamp(f"{route}\0{session}")


def body(card: str, message: object) -> dict[str, object] | None:
    """None only when even an empty text would not fit (an absurd card id)."""
    text = clean(message) if isinstance(message, str) else ""
    if not text.strip():
        return {"session_id": card, "unanswered": "blank"}
    budget = MAX_BODY - _ENVELOPE - json_size(card)
    if budget < json_size(MARKER) + 1:
        return None
    return {"session_id": card, "text": fit_bytes(truncate(text), budget)}


def clean(text: str) -> str:
    """Each lone surrogate (no UTF-8 form) made U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def utf16_units(text: str) -> int:
    """Length as JavaScript counts it: characters beyond U+FFFF take two units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def truncate(text: str, limit: int = MAX_UNITS) -> str:
    """The first `limit` UTF-16 units plus MARKER, never splitting a surrogate pair."""
    if len(text) <= limit // 2 or utf16_units(text) <= limit:
        return text
    raw = text.encode("utf-16-le", "surrogatepass")[: 2 * limit]
    if 0xD8 <= raw[-1] <= 0xDB:  # the last unit is a high surrogate: its pair is cut off
        raw = raw[:-2]
    return raw.decode("utf-16-le", "surrogatepass") + MARKER


def json_size(text: str) -> int:
    """Bytes `text` takes as a JSON string's contents (orjson's encoding, quotes excluded)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if text.isprintable():  # no control characters; only quotes and backslashes escape
        return size + text.count('"') + text.count("\\")
    size += sum(text.count(ch) for ch in _SHORT_ESCAPES)
    return size + 5 * sum(text.count(ch) for ch in _LONG_ESCAPES)


def fit_bytes(text: str, budget: int) -> str:
    """The longest prefix whose JSON form fits `budget` bytes beside the marker."""
    if 6 * len(text) <= budget or json_size(text) <= budget:
        return text
    if text.endswith(MARKER):
        text = text[: -len(MARKER)]
    room = budget - json_size(MARKER)
    low, high = 0, len(text)  # json_size(text[:low]) <= room < json_size(text[:high])
    while high - low > 1:
        middle = (low + high) // 2
        if json_size(text[:middle]) <= room:
            low = middle
        else:
            high = middle
    return text[:low] + MARKER
