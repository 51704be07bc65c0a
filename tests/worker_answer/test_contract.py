"""The vectors, the stand-in's validator and our shape check agree with each other,
so that check_body's two checks mean what they say."""

from __future__ import annotations

import json

import pytest

from lich_hooks.jobs.worker_answer import body
from lich_hooks.standin.contracts import validate
from tests.worker_answer.contract import (
    ACCEPT_SHAPES,
    ENDPOINT,
    REJECT_SHAPES,
    VECTORS,
    check_body,
    shape,
)


def _raw(case: dict[str, object]) -> bytes:
    if "raw" in case:
        return str(case["raw"]).encode()
    return json.dumps(case["body"]).encode()


@pytest.mark.parametrize("case", VECTORS, ids=[str(v["name"]) for v in VECTORS])
def test_validator_agrees_with_every_vector(case: dict[str, object]) -> None:
    verdict = validate(ENDPOINT, _raw(case))
    if "accept" in case:
        assert verdict.status == 204
        assert verdict.accepted is not None
        expected = case["accept"]
        assert isinstance(expected, dict)
        assert {k: verdict.accepted[k] for k in expected} == expected
    else:
        assert (verdict.status, verdict.reason) == (400, case["reject"])


def test_shapes_separate_accept_from_reject() -> None:
    assert ACCEPT_SHAPES
    assert REJECT_SHAPES
    assert not ACCEPT_SHAPES & REJECT_SHAPES


@pytest.mark.parametrize(
    "case", [v for v in VECTORS if "reject" in v and "body" in v], ids=lambda v: str(v["name"])
)
def test_check_body_refuses_every_reject_case(case: dict[str, object]) -> None:
    with pytest.raises(AssertionError):
        check_body(_raw(case))


@pytest.mark.parametrize("message", ["Done.", " \n\t", "", None, 42, "x" * 20_000, "\x01" * 20_000])
def test_every_body_we_build_passes(message: object) -> None:
    built = body("card-1", message)
    assert built is not None
    assert check_body(json.dumps(built, ensure_ascii=False).encode()) == built
    assert shape(built) in ACCEPT_SHAPES
