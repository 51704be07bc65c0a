"""What lich receives (docs/transport.md): the URL, the headers, and body bytes that are
exactly orjson's encoding of the values the harness gave us."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lich_hooks import PLUGIN_RELEASE, __version__
from lich_hooks.base import lichenv, transport
from lich_hooks.human.standin.server import StandIn
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

    line, host = transport.request(4242, token, "session-start", b"").split(b"\r\n")[:2]
    target = line.decode("ascii").split(" ")[1]
    url = f"http://{host.decode('ascii').removeprefix('Host: ')}{target}"
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
    line = transport.request(1, token, "mod/answer", b"").split(b"\r\n")[0]
    assert line == b"POST /mod/answer?token=ab%FFcd HTTP/1.1"


# --- the body: the C encoder behind json, byte for byte orjson's -------------------------

# Any code point, lone surrogates included (hypothesis leaves them out by default),
# and the characters every JSON encoder treats specially, often.
ANY_CHAR = st.one_of(
    st.characters(codec=None, exclude_categories=()),
    st.sampled_from('"\\/\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1f\x7f\x80\u2028\u2029\ufeff'),
    st.sampled_from("\ud800\udbff\udc00\udcff\udfff\U0001f642\u00e9\u4ee4"),
)
ANY_TEXT = st.text(ANY_CHAR, max_size=80)
VALUES = st.one_of(
    ANY_TEXT,
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.booleans(),
    st.none(),
)


def _orjson_or_error(body: dict[str, object]) -> bytes | None:
    try:
        return orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate has no UTF-8 form
        return None


def _ours_or_error(body: dict[str, object]) -> bytes | None:
    try:
        return transport.encode(body)
    except UnicodeEncodeError:
        return None


@given(st.dictionaries(ANY_TEXT, VALUES, max_size=4))
@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
def test_encode_is_byte_for_byte_orjson(body: dict[str, object]) -> None:
    """Both refuse the same bodies (a lone surrogate), and agree on every other byte."""
    assert _ours_or_error(body) == _orjson_or_error(body)


@given(ANY_TEXT, ANY_TEXT)
@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
def test_encode_real_bodies_like_orjson(card: str, text: str) -> None:
    for body in (
        {"session_id": card, "provider_session_id": text, "provider": "claude"},
        {"session_id": card, "text": text},
        {"session_id": card, "unanswered": "blank"},
    ):
        assert _ours_or_error(body) == _orjson_or_error(body)  # type: ignore[arg-type]


def test_encode_without_the_c_accelerator_gives_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body: dict[str, object] = {"session_id": 'q"\\\x00\x1f\x7f é 令 🙂', "n": 1, "b": None}
    expected = transport.encode(body)
    monkeypatch.setitem(__import__("sys").modules, "_json", None)  # import _json fails
    assert transport.encode(body) == expected == orjson.dumps(body)


def test_encode_refuses_what_is_not_json() -> None:
    with pytest.raises(TypeError):
        transport.encode({"x": object()})


# --- the token in the URL ------------------------------------------------------------------


TOKENS = st.one_of(
    st.text(ANY_CHAR.filter(lambda ch: not "\ud800" <= ch <= "\udfff")),
    st.binary().map(lambda raw: raw.decode("utf-8", "surrogateescape")),  # os.environ's form
)


@given(TOKENS)
@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
def test_quote_token_is_urllib_quote(token: str) -> None:
    assert lichenv.quote_token(token) == quote(token, safe="", errors="surrogateescape")


# --- the request on the wire -----------------------------------------------------------------


@given(TOKENS, st.sampled_from(["session-start", "mod/answer"]), st.binary(max_size=300))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_request_is_one_well_formed_post(token: str, endpoint: str, body: bytes) -> None:
    """No token can add a header or a line: the head is exactly ours, the body follows."""
    data = transport.request(4242, token, endpoint, body)
    head, sep, rest = data.partition(b"\r\n\r\n")
    assert sep and rest == body
    lines = head.decode("ascii").split("\r\n")
    assert lines == [
        f"POST /{endpoint}?token={quote(token, safe='', errors='surrogateescape')} HTTP/1.1",
        "Host: 127.0.0.1:4242",
        "Content-Type: application/json",
        f"X-Lich-Plugin: {PLUGIN_RELEASE}",
        f"User-Agent: lich-hooks/{__version__}",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]


# --- reading lich's answer -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("received", "status"),
    [
        (b"", None),
        (b"HTTP/1.1 2", None),
        (b"HTTP/1.1 204 No Content\r\n", None),  # the head is not complete yet
        (b"HTTP/1.1 204 No Content\r\nX-A: b\r\n", None),
        (b"HTTP/1.1 204 No Content\r\n\r\n", 204),
        (b"HTTP/1.0 204\r\n\r\n", 204),
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nbad b", 400),
        (b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://x/\r\n\r\n", 307),
        (b"HTTP/1.1 100 Continue\r\n\r\n", None),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", 204),
        (
            b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
            b"HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            204,
        ),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", 101),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 N", None),
    ],
)
def test_final_status(received: bytes, status: int | None) -> None:
    assert transport.final_status(received) == status


@pytest.mark.parametrize(
    "received",
    [
        b"\x00\xff garbage not http\r\n\r\n",
        b"SSH-2.0-OpenSSH_9.6\r\n",
        b"HTTP/2 204\r\n\r\n",
        b"HTTP/1.1 2O4 No Content\r\n\r\n",
        b"HTTP/1.1 2040 No Content\r\n\r\n",
        b"<html><body>not an answer</body></html>",
        b"HTTP/1.1 200 OK\r\n" + b"X-Endless: y\r\n" * 2000,  # a head with no end
        b"HTTP/1.1 100 Continue\r\n\r\n" * 2000,  # interim answers with no final one
    ],
)
def test_final_status_refuses_what_is_not_an_http_head(received: bytes) -> None:
    with pytest.raises(transport.BadResponse):
        transport.final_status(received)
