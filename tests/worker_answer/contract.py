"""Checking a /mod/answer body against lich's published vectors, both ways.

lich's validator (the stand-in's copy) must take it, and its shape must be the
shape of an `accept` case and of no `reject` case. A shape names, per key,
what the rules look at: a non-empty id, a non-blank / blank / non-string text,
the literal `unanswered` value, any other key.
"""

from __future__ import annotations

import json
from pathlib import Path

from lich_hooks.standin.contracts import validate

VECTORS_FILE = Path(__file__).resolve().parents[1] / "contracts" / "mod-answer.jsonl"
VECTORS: list[dict[str, object]] = [
    json.loads(line) for line in VECTORS_FILE.read_text().splitlines() if line.strip()
]
ENDPOINT = "mod/answer"
LIMIT = 64 * 1024


def shape(body: dict[str, object]) -> frozenset[tuple[str, object]]:
    parts: set[tuple[str, object]] = set()
    for key, value in body.items():
        if key == "session_id":
            parts.add((key, "id" if isinstance(value, str) and value else "bad"))
        elif key == "text":
            if isinstance(value, str):
                parts.add((key, "text" if value.strip() else "blank"))
            else:
                parts.add((key, type(value).__name__))
        elif key == "unanswered":
            parts.add((key, json.dumps(value)))
        else:
            parts.add(("extra", key))
    return frozenset(parts)


ACCEPT_SHAPES = {shape(v["body"]) for v in VECTORS if "accept" in v and "body" in v}  # type: ignore[arg-type]
REJECT_SHAPES = {shape(v["body"]) for v in VECTORS if "reject" in v and "body" in v}  # type: ignore[arg-type]


def check_body(raw: bytes) -> dict[str, object]:
    """Assert `raw` is a body lich takes and the vectors allow; return it parsed."""
    assert len(raw) < LIMIT, len(raw)
    verdict = validate(ENDPOINT, raw)
    assert verdict.status == 204, verdict.reason
    body = json.loads(raw)
    assert isinstance(body, dict)
    assert set(body) in ({"session_id", "text"}, {"session_id", "unanswered"}), body.keys()
    assert shape(body) in ACCEPT_SHAPES, shape(body)
    assert shape(body) not in REJECT_SHAPES, shape(body)
    assert verdict.accepted == body
    return body
