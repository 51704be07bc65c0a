from __future__ import annotations

from collections.abc import Iterator

import pytest

from lich_hooks.standin.server import StandIn


@pytest.fixture(scope="module")
def lich() -> Iterator[StandIn]:
    """One stand-in per module: closing one costs half a second of its polling.

    Every test starts with an empty list and waits (StandIn.wait) for each
    request it causes, so no request leaks into the next test.
    """
    with StandIn() as standin:
        yield standin


@pytest.fixture(autouse=True)
def _no_requests_yet(request: pytest.FixtureRequest) -> None:
    if "lich" in request.fixturenames:
        request.getfixturevalue("lich").received.clear()
