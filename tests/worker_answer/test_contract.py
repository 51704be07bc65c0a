"""Every /mod/answer body worker_answer builds is one lich takes, by the one checker
the tests use on what our client sends (tests/support/contract_check.py, itself
checked against lich's vectors in tests/spine/test_contracts.py)."""

from __future__ import annotations

import orjson
import pytest

from lich_hooks.hook.jobs.worker_answer import body
from tests.support.contract_check import assert_client_body


@pytest.mark.parametrize("message", ["Done.", " \n\t", "", None, 42, "x" * 20_000, "\x01" * 20_000])
def test_every_body_we_build_passes(message: object) -> None:
    built = body("card-1", message)
    assert built is not None
    # orjson: the sender's encoder (transport.py), so the bytes are what lich would get
    assert assert_client_body("mod/answer", orjson.dumps(built)) == built
