"""lich's contract vectors, both ways (docs/session-start.md, docs/worker-answer.md).

Every published case goes through the stand-in's validator and through the
live stand-in over HTTP, so the stand-in that judges our client (in demo,
listen and every test) answers exactly like lich. The checker other tests use
on our client's bodies is itself checked against the same vectors.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest

from lich_hooks.base import harnesses as harness
from lich_hooks.human.standin.contracts import LICH_PROVIDERS, validate
from lich_hooks.human.standin.server import StandIn
from tests.support import contract_check
from tests.support.contract_check import assert_client_body, case_bytes, cases

ALL = [(endpoint, case) for endpoint in contract_check.FILES for case in cases(endpoint)]
IDS = [f"{endpoint}:{case['name']}" for endpoint, case in ALL]
SHARED = Path("/work/shared/contracts")  # lich's own copy, where this machine has it


def _accepted_matches(accepted: object, expected: object) -> None:
    assert isinstance(accepted, dict) and isinstance(expected, dict)
    for key, value in expected.items():
        assert accepted[key] == value, key


@pytest.mark.parametrize(("endpoint", "case"), ALL, ids=IDS)
def test_validator_answers_like_lich(endpoint: str, case: dict[str, object]) -> None:
    reply = validate(endpoint, case_bytes(case))
    if "accept" in case:
        assert (reply.status, reply.reason) == (204, None)
        _accepted_matches(reply.accepted, case["accept"])
    else:
        assert (reply.status, reply.reason) == (400, case["reject"])
        assert reply.accepted is None


def _post(port: int, path: str, body: bytes) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_stand_in_answers_every_case_over_http(lich: StandIn) -> None:
    for endpoint, case in ALL:
        status, text = _post(lich.port, f"/{endpoint}?token={quote(lich.token)}", case_bytes(case))
        received = lich.received[-1]
        assert received.body == case_bytes(case)
        if "accept" in case:
            assert (status, text) == (204, b""), case["name"]
            _accepted_matches(received.accepted, case["accept"])
        else:
            assert (status, text.decode()) == (400, case["reject"]), case["name"]


def test_stand_in_checks_token_and_endpoint(lich: StandIn) -> None:
    body = case_bytes(contract_check.accept_cases("session-start")[0])
    assert _post(lich.port, "/session-start?token=wrong", body)[0] == 401
    assert _post(lich.port, "/session-start", body)[0] == 401
    assert _post(lich.port, f"/nope?token={lich.token}", body)[0] == 404
    assert _post(lich.port, f"/session-start?token={lich.token}", b"x" * 70_000)[0] == 413


@pytest.mark.skipif(not SHARED.is_dir(), reason="lich's published vectors are not on this machine")
def test_vendored_vectors_are_lichs() -> None:
    for name in contract_check.FILES.values():
        vendored = contract_check.CONTRACTS / name
        assert vendored.read_bytes() == (SHARED / name).read_bytes(), name


# --- the checker other tests use on our client's bodies --------------------------------


def test_checker_takes_what_the_client_must_send() -> None:
    for provider in harness.ROUTES:
        body = {"session_id": "c", "provider_session_id": "p", "provider": provider}
        assert assert_client_body("session-start", orjson.dumps(body)) == body
    for body in ({"session_id": "s", "text": "Done."}, {"session_id": "s", "unanswered": "blank"}):
        assert_client_body("mod/answer", orjson.dumps(body))


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        # provider omitted: lich accepts it, docs/session-start.md says we always send it
        ("session-start", b'{"session_id":"c","provider_session_id":"p"}'),
        ("session-start", b'{"session_id":"c","claude_session_id":"p","provider":"claude"}'),
        ("session-start", b'{"session_id":"c","provider_session_id":"p","provider":"aider"}'),
        ("session-start", b'{"session_id":"c","provider_session_id":7,"provider":"codex"}'),
        ("session-start", b'{"session_id":"c","provider_session_id":"","provider":"codex"}'),
        ("session-start", b'{"session_id": "c", "provider_session_id": "p", "provider": "codex"}'),
        ("session-start", b'{"session_id":"c","provider_session_id":"p","provider":"codex","x":1}'),
        ("mod/answer", b'{"session_id":"s","text":"Done.","turn_id":"t"}'),
        ("mod/answer", b'{"session_id":"s","unanswered":"aborted"}'),
        ("mod/answer", b'{"session_id":"s","text":" \\n"}'),
        ("mod/answer", b'{"session_id":"s"}'),
        ("mod/answer", b"["),
    ],
)
def test_checker_refuses_what_the_client_must_not_send(endpoint: str, body: bytes) -> None:
    with pytest.raises((AssertionError, ValueError)):
        assert_client_body(endpoint, body)


def test_checker_refuses_every_reject_case() -> None:
    for endpoint in contract_check.FILES:
        for case in contract_check.reject_cases(endpoint):
            # orjson's bytes, so it is the body the checker refuses, not the spacing
            body = case.get("body")
            sent = orjson.dumps(body) if isinstance(body, dict) else case_bytes(case)
            with pytest.raises((AssertionError, ValueError)):
                assert_client_body(endpoint, sent)


@pytest.mark.parametrize("endpoint", sorted(contract_check.FILES))
def test_value_shapes_separate_accept_from_reject(endpoint: str) -> None:
    accepted = contract_check.value_shapes(endpoint, "accept")
    refused = contract_check.value_shapes(endpoint, "reject")
    assert accepted and refused
    assert not accepted & refused


def test_vectors_parse() -> None:
    for endpoint in contract_check.FILES:
        for case in cases(endpoint):
            assert ("accept" in case) != ("reject" in case)
            assert ("body" in case) != ("raw" in case)
            json.dumps(case)


def test_every_provider_we_report_is_one_lich_registers() -> None:
    """The stand-in's list is lich's (its accept vectors), never ours: a provider added to
    harness.py that lich does not register is refused here, and by every test that reports it."""
    accepted = {
        case["accept"]["provider"]  # type: ignore[index]
        for case in cases("session-start")
        if "accept" in case
    }
    assert set(LICH_PROVIDERS) == accepted
    assert set(harness.ROUTES) <= set(LICH_PROVIDERS)
