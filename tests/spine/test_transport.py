"""What lich receives (SPEC §2): the URL, the headers, and body bytes that are
exactly orjson's encoding of the values the harness gave us."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lich_hooks import PLUGIN_RELEASE, __version__, transport
from lich_hooks.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, run_hook, wait_for_log

TOKEN = "a&b=c+d e/f?g#h%i ü 令牌"


def test_headers_url_and_body(tmp_path: Path) -> None:
    with StandIn(token=TOKEN) as lich:
        env = base_env(tmp_path, **lich.env("card-1"))
        ran = run_hook("SessionStart claude", {"session_id": SID}, env)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
        [request] = lich.wait(1)
    assert request.status == 204 and request.token == TOKEN
    assert request.path == "/session-start?token=" + quote(TOKEN, safe="")
    assert request.headers["x-lich-plugin"] == PLUGIN_RELEASE == "0.20.0"
    assert request.headers["user-agent"] == f"lich-hooks/{__version__}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["host"] == f"127.0.0.1:{lich.port}"
    assert request.body == orjson.dumps(
        {"session_id": "card-1", "provider_session_id": SID, "provider": "claude"}
    )
    assert_client_body("session-start", request.body)


NASTY_IDS = [
    'quote " and \\ backslash',
    "new\nline\r\nand\ttab",
    "control \x00\x01\x1f\x7f",
    "Привет мир / 你好世界 / مرحبا / 🙂‍↔️",
    "'; DROP TABLE cards; --",
    "$(rm -rf /) `id` ${HOME}",
    "\u2028\u2029 separators",
    " leading and trailing ",
    "x" * 5000,
]


@pytest.mark.parametrize("conversation", NASTY_IDS, ids=range(len(NASTY_IDS)))
@pytest.mark.parametrize("harness", ["SessionStart codex", "PreInvocation antigravity"])
def test_ids_are_sent_exactly(
    harness: str, conversation: str, lich: StandIn, tmp_path: Path
) -> None:
    card = "card «" + conversation[:40] + "»"
    env = base_env(tmp_path, **lich.env(card.replace("\x00", "")))
    body = {"session_id": conversation, "conversationId": conversation}
    ran = run_hook(harness, body, env)
    assert ran.returncode == 0
    [request] = lich.wait(1)
    provider = harness.split()[1]
    expected = {
        "session_id": card.replace("\x00", ""),
        "provider_session_id": conversation,
        "provider": provider,
    }
    assert request.body == orjson.dumps(expected)
    assert request.accepted == expected
    if harness.startswith("PreInvocation"):
        # the same id again is remembered exactly, so it costs no request
        wait_for_log(env, 1)
        run_hook(harness, body, env)
        assert wait_for_log(env, 2)[-1]["decision"] == "already-reported"


@given(st.text(min_size=1, max_size=200))
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_url_round_trips_any_token(token: str) -> None:
    from urllib.parse import parse_qs, urlsplit

    url = transport.url(4242, token, "session-start")
    parts = urlsplit(url)
    assert (parts.scheme, parts.hostname, parts.port, parts.path) == (
        "http",
        "127.0.0.1",
        4242,
        "/session-start",
    )
    assert url.isascii()
    # what lich (and the stand-in) decode is the token itself, whatever it holds
    assert parse_qs(parts.query, keep_blank_values=True) == {"token": [token]}


def test_url_sends_undecodable_token_bytes_as_they_are() -> None:
    token = b"ab\xffcd".decode("utf-8", "surrogateescape")  # how os.environ holds it
    assert transport.url(1, token, "mod/answer").endswith("/mod/answer?token=ab%FFcd")
