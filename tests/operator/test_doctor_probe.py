"""doctor's listener probe (the sender's own transport.post) against
listeners that misbehave: it names what went wrong, never follows a redirect or a
proxy with the token, and never shows the token."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.operator.conftest import Scratch
from tests.support import listeners

TOKEN = "SeCrEt/t0ken"
FORMS = (TOKEN, "SeCrEt%2Ft0ken")


def _listener_checks(scratch: Scratch, env: dict[str, str]) -> dict[str, dict[str, object]]:
    ran = scratch.cli("doctor", "--json", env=env)
    for form in FORMS:
        assert form not in ran.stdout + ran.stderr
    rows = json.loads(ran.stdout)["checks"]
    return {row["name"]: row for row in rows if row["name"].startswith("lich ")}


@pytest.mark.parametrize(
    ("listener", "summary"),
    [
        (listeners.Hanging, "(timed out)"),
        (listeners.Reset, "(Connection reset by peer)"),
        (lambda: listeners.Scripted(lambda: [b"garbage\r\n\r\n"]), "(no HTTP answer"),
    ],
    ids=["hanging", "reset", "garbage"],
)
def test_a_listener_that_does_not_answer_is_named(
    listener: Callable[[], listeners.Listener], summary: str, scratch: Scratch
) -> None:
    with listener() as broken:
        rows = _listener_checks(scratch, {**scratch.env, **broken.env(token=TOKEN)})
    assert rows["lich listener"]["status"] == "fail"
    assert summary in str(rows["lich listener"]["summary"])


def test_the_probe_follows_no_redirect_and_no_proxy(scratch: Scratch) -> None:
    with StandIn(token=TOKEN) as lich, listeners.CapturingProxy() as proxy:
        location = f"http://127.0.0.1:{lich.port}/session-start?token={TOKEN}"
        answer = f"HTTP/1.1 307 X\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
        with listeners.Scripted(lambda: [answer.encode()]) as redirecting:
            proxy_url = f"http://127.0.0.1:{proxy.port}"
            env = {
                **scratch.env,
                **redirecting.env(token=TOKEN),
                "HTTP_PROXY": proxy_url,
                "http_proxy": proxy_url,
                "ALL_PROXY": proxy_url,
            }
            rows = _listener_checks(scratch, env)
            assert redirecting.connections == 1
        assert lich.received == [] and proxy.connections == 0
    assert rows["lich token"]["status"] == "warn"
    assert "unexpected answer 307" in str(rows["lich token"]["summary"])
