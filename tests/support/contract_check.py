"""Check a body our client sent against lich's published contract vectors.

lich publishes, per endpoint, cases it accepts and cases it rejects
(lich_hooks/human/standin/vectors/<endpoint>.jsonl). A body this package sends must look like
an accept case and trip no reject case (docs/session-start.md,
docs/worker-answer.md). `assert_client_body`
checks exactly that, so every test that sees a request on the stand-in (the
session-start tests here, the /mod/answer tests elsewhere) can call one function:

    from tests.support.contract_check import assert_client_body
    body = assert_client_body("mod/answer", received.body)

What "looks like an accept case" means:
- the bytes are exactly orjson's encoding of the object they hold (docs/transport.md:
  bodies come from the encoder, never from string concatenation);
- the key set equals the key set of some accept case's body, minus keys lich
  ignores (those that no accept case's stored result names, e.g. `turn_id`);
- every value has the type that case's value has;
- enumerated fields (`provider`, `unanswered`) hold a value some accept case
  holds;
- its `value_shape` (what lich's rules look at in each value: an id empty or
  not, a text blank or not, an enumerated value known or not) is some accept
  case's and no reject case's;
- keys this client always sends are present (`provider` is always sent)
  and the deprecated `claude_session_id` never is;
- the stand-in's validator, which reproduces every reject case (tests pin
  that), answers 204 and stores exactly what was sent.

This is the one checker of our bodies; the rules themselves (what lich
answers) live in lich_hooks/human/standin/contracts.py, which the stand-in serves.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import orjson

from lich_hooks.human.standin.contracts import VECTORS, validate

CONTRACTS = Path(VECTORS)
FILES = {"session-start": "session-start.jsonl", "mod/answer": "mod-answer.jsonl"}
ENUMERATED = ("provider", "unanswered")
REQUIRED = {
    "session-start": frozenset({"session_id", "provider_session_id", "provider"}),
    "mod/answer": frozenset({"session_id"}),
}
FORBIDDEN = frozenset({"claude_session_id"})
IDS = ("session_id", "provider_session_id", "claude_session_id")


@cache
def cases(endpoint: str) -> tuple[dict[str, object], ...]:
    """Every vector for `endpoint`, in file order."""
    path = CONTRACTS / FILES[endpoint]
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


def accept_cases(endpoint: str) -> list[dict[str, object]]:
    return [case for case in cases(endpoint) if "accept" in case]


def reject_cases(endpoint: str) -> list[dict[str, object]]:
    return [case for case in cases(endpoint) if "reject" in case]


def case_bytes(case: dict[str, object]) -> bytes:
    """What to send for a case: the raw text, or the body as JSON."""
    raw = case.get("raw")
    if isinstance(raw, str):
        return raw.encode("utf-8")
    return json.dumps(case["body"], ensure_ascii=False).encode("utf-8")


def stored_keys(endpoint: str) -> frozenset[str]:
    """Keys lich keeps: the union of every accept case's stored result."""
    keys: set[str] = set()
    for case in accept_cases(endpoint):
        accept = case["accept"]
        assert isinstance(accept, dict)
        keys.update(accept)
    return frozenset(keys)


def enumerated_values(endpoint: str, key: str) -> frozenset[object]:
    """Values an accept case holds for `key`, in its body or in what lich stored."""
    values: set[object] = set()
    for case in accept_cases(endpoint):
        for part in (case.get("body"), case.get("accept")):
            if isinstance(part, dict) and key in part:
                values.add(part[key])
    return frozenset(values)


def value_shape(endpoint: str, body: dict[str, object]) -> frozenset[tuple[str, str]]:
    """Per key, the class of value lich's rules tell apart (any other key: "extra")."""
    parts: set[tuple[str, str]] = set()
    for key, value in body.items():
        if key in IDS:
            parts.add((key, "id" if isinstance(value, str) and value else "bad"))
        elif key == "text":
            if isinstance(value, str):
                parts.add((key, "text" if value.strip() else "blank"))
            else:
                parts.add((key, type(value).__name__))
        elif key in ENUMERATED:
            known = value in enumerated_values(endpoint, key)
            parts.add((key, "known" if known else json.dumps(value)))
        else:
            parts.add(("extra", key))
    return frozenset(parts)


def value_shapes(endpoint: str, kind: str) -> frozenset[frozenset[tuple[str, str]]]:
    """The value shapes of every `kind` ("accept" or "reject") case that has a body."""
    found = set()
    for case in cases(endpoint):
        body = case.get("body")
        if kind in case and isinstance(body, dict):
            found.add(value_shape(endpoint, body))
    return frozenset(found)


def _shape(body: dict[str, object], keep: frozenset[str]) -> dict[str, type]:
    return {key: type(value) for key, value in body.items() if key in keep}


def assert_client_body(endpoint: str, body: bytes) -> dict[str, object]:
    """Assert `body` (bytes our client sent to /`endpoint`) honours the contract.

    Returns the decoded object so callers can assert on its values.
    """
    parsed = json.loads(body.decode("utf-8"))
    assert isinstance(parsed, dict), f"body is not a JSON object: {body!r}"
    assert orjson.dumps(parsed) == body, f"body is not orjson's encoding: {body!r}"

    forbidden = FORBIDDEN & parsed.keys()
    assert not forbidden, f"deprecated keys sent: {sorted(forbidden)}"
    missing = REQUIRED[endpoint] - parsed.keys()
    assert not missing, f"required keys missing: {sorted(missing)}"
    keep = stored_keys(endpoint)
    ignored = parsed.keys() - keep
    assert not ignored, f"keys lich ignores were sent: {sorted(ignored)}"

    shape = _shape(parsed, keep)
    shapes = []
    for case in accept_cases(endpoint):
        case_body = case["body"]
        assert isinstance(case_body, dict)
        shapes.append(_shape(case_body, keep))
    assert shape in shapes, f"{shape} matches no accept case of {endpoint}: {shapes}"

    for key in ENUMERATED:
        if key in parsed:
            allowed = enumerated_values(endpoint, key)
            assert parsed[key] in allowed, (
                f"{key}={parsed[key]!r} not in {sorted(map(str, allowed))}"
            )

    values = value_shape(endpoint, parsed)
    assert values in value_shapes(endpoint, "accept"), f"{values}: no accept case's values"
    assert values not in value_shapes(endpoint, "reject"), f"{values}: a reject case's values"

    reply = validate(endpoint, body)
    assert reply.status == 204, f"lich would refuse it: {reply.status} {reply.reason}"
    assert reply.accepted == parsed, f"lich would store {reply.accepted}, not {parsed}"
    return parsed
