"""lich's rules for the two endpoints we call; `validate` answers with lich's reason strings, pinned
by lich's published vectors, vendored verbatim in vectors/."""

from __future__ import annotations

import json
import os
from typing import NamedTuple

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")


def _registered() -> tuple[str, ...]:
    with open(os.path.join(VECTORS, "session-start.jsonl"), encoding="utf-8") as vectors:
        cases = [json.loads(line) for line in vectors if line.strip()]
    found = [case["accept"]["provider"] for case in cases if "accept" in case]
    return tuple(dict.fromkeys(found))


# lich's registered provider ids, from its vectors (never harness.ROUTES): a harness lich has
# not registered is refused here as lich would refuse it, and every test reporting it fails.
LICH_PROVIDERS = _registered()

MAX_BODY = 64 * 1024
ENDPOINTS = ("session-start", "mod/answer")
UNANSWERED = ("blank", "error", "refusal")


class Reply(NamedTuple):
    """What lich answers one request: 204 and what it stores, or a status and why not."""

    status: int
    accepted: dict[str, object] | None
    reason: str | None


def _refuse(reason: str, status: int = 400) -> Reply:
    return Reply(status, None, reason)


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and value != ""


def validate(endpoint: str, raw: bytes) -> Reply:
    if endpoint not in ENDPOINTS:
        return _refuse("unknown endpoint", 404)
    if len(raw) > MAX_BODY:
        return _refuse("body too large", 413)
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        body = None
    if not isinstance(body, dict):
        return _refuse("body must be a JSON object")
    if endpoint == "session-start":
        return _session_start(body)
    return _mod_answer(body)


def _session_start(body: dict[str, object]) -> Reply:
    if not _nonempty_str(body.get("session_id")):
        return _refuse("session_id is required")
    # lich still takes the pre-0.3 alias from old plugins; this package never sends it.
    provider_session_id = body.get("provider_session_id", body.get("claude_session_id"))
    if not _nonempty_str(provider_session_id):
        return _refuse("provider_session_id is required")
    provider = body.get("provider", "claude")
    if provider not in LICH_PROVIDERS:
        return _refuse("provider must be a registered provider id")
    ids = {"session_id": body["session_id"], "provider_session_id": provider_session_id}
    return Reply(204, {**ids, "provider": provider}, None)


def _mod_answer(body: dict[str, object]) -> Reply:
    if not _nonempty_str(body.get("session_id")):
        return _refuse("session_id is required")
    if ("text" in body) == ("unanswered" in body):
        return _refuse("exactly one of text and unanswered")
    if "text" in body:
        text = body["text"]
        if not isinstance(text, str):
            return _refuse("text must be a string")
        if not text.strip():
            return _refuse("a blank text is no answer")
        return Reply(204, {"session_id": body["session_id"], "text": text}, None)
    if body["unanswered"] not in UNANSWERED:
        return _refuse("unanswered must be blank, error or refusal")
    return Reply(204, {"session_id": body["session_id"], "unanswered": body["unanswered"]}, None)
