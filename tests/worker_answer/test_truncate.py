"""The cut (docs/worker-answer.md) as properties over arbitrary Unicode.

Lengths are UTF-16 code units, the way lich (JavaScript) counts them; the text
reaching `truncate` has no lone surrogates (`clean` replaced them), so the
strategies draw from every code point except the surrogate block, and `clean`
gets its own properties over text that does contain them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.hook.jobs.worker_answer import (
    MARKER,
    MAX_BODY,
    MAX_UNITS,
    body,
    clean,
    fit_bytes,
    json_size,
    truncate,
    utf16_units,
)
from lich_hooks.human.standin.contracts import validate


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


# Mostly astral-heavy mixes, so pairs land on the cut often.
ASTRAL = st.characters(min_codepoint=0x10000)
ANY = st.characters(exclude_categories=["Cs"])
MIXED = st.text(st.one_of(ANY, ASTRAL, st.sampled_from('a\n\x00"\\')))
# characters() never draws a surrogate, whatever its arguments: build them by hand.
SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
WITH_SURROGATES = st.text(st.one_of(ANY, ASTRAL, SURROGATE))


def _long(draw: Callable[..., Any], limit: int) -> str:
    piece: str = draw(MIXED.filter(bool))
    extra: int = draw(st.integers(0, 3))
    return piece * (limit // max(1, units(piece)) + extra)


@settings(deadline=None)
@given(MIXED, st.integers(1, 60))
def test_cut_properties(text: str, limit: int) -> None:
    result = truncate(text, limit)
    if units(text) <= limit:
        assert result == text  # short text is untouched…
        assert truncate(result, limit) == result  # …and so idempotent
        return
    assert result.endswith(MARKER)
    prefix = result[: -len(MARKER)]
    assert text.startswith(prefix)  # a prefix of the original, no pair split
    assert units(prefix) in (limit, limit - 1)
    if units(prefix) == limit - 1:  # one unit short only for a pair straddling the limit
        assert ord(text[len(prefix)]) > 0xFFFF
    assert units(result) <= limit + len(MARKER)
    result.encode("utf-8")  # no lone surrogate anywhere


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_cut_at_the_real_limit(data: st.DataObject) -> None:
    text = _long(data.draw, MAX_UNITS)
    result = truncate(text)
    if units(text) <= MAX_UNITS:
        assert result == text
    else:
        prefix = result[: -len(MARKER)]
        assert result.endswith(MARKER) and text.startswith(prefix)
        assert MAX_UNITS - 1 <= units(prefix) <= MAX_UNITS


def test_cut_examples() -> None:
    assert truncate("a" * 16_000) == "a" * 16_000
    assert truncate("a" * 16_001) == "a" * 16_000 + "\n[truncated]"
    assert truncate("a" * 15_999 + "😀") == "a" * 15_999 + MARKER  # 16,001 units: the pair goes
    assert truncate("a" * 15_998 + "😀") == "a" * 15_998 + "😀"  # 16,000 units: fits
    assert truncate("😀" * 8_001) == "😀" * 8_000 + MARKER
    assert truncate("a" + "😀" * 8_000) == "a" + "😀" * 7_999 + MARKER  # pair at 15,999-16,000


@settings(deadline=None)
@given(MIXED)
def test_utf16_units(text: str) -> None:
    assert utf16_units(text) == units(text)


@settings(deadline=None)
@given(WITH_SURROGATES)
def test_clean(text: str) -> None:
    """Every surrogate code point (lone, or two that happen to sit side by side as
    the JSON parser would never produce) becomes U+FFFD; nothing else changes."""
    cleaned = clean(text)
    cleaned.encode("utf-8")
    assert len(cleaned) == len(text)
    for before, after in zip(text, cleaned, strict=True):
        assert after == (before if not 0xD800 <= ord(before) <= 0xDFFF else "\ufffd")


@settings(deadline=None)
@given(MIXED)
def test_json_size_is_what_orjson_writes(text: str) -> None:
    assert json_size(text) == len(orjson.dumps(text)) - 2


@settings(deadline=None)
@given(MIXED, st.integers(len(MARKER) + 14, 400))
def test_fit_bytes(text: str, budget: int) -> None:
    fitted = fit_bytes(text, budget)
    if json_size(text) <= budget:
        assert fitted == text
    else:
        assert fitted.endswith(MARKER)
        assert text.startswith(fitted[: -len(MARKER)])
        assert json_size(fitted) <= budget
        # the longest prefix that fits: one more character would not
        kept = len(fitted) - len(MARKER)
        assert json_size(text[: kept + 1] + MARKER) > budget


@settings(max_examples=30, deadline=None)
@given(st.data(), st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=64))
def test_every_body_fits_and_is_taken(data: st.DataObject, card: str) -> None:
    heavy = st.sampled_from(["\x01", "\x1f", '"', "😀", "字", "a", "\n"])
    text = data.draw(st.text(heavy, min_size=1, max_size=50)) * data.draw(st.integers(1, 2000))
    built = body(card, text)
    assert built is not None
    raw = orjson.dumps(built)
    assert len(raw) <= MAX_BODY
    reply = validate("mod/answer", raw)
    assert reply.status == 204, reply.reason
    assert json.loads(raw) == built


def test_an_absurd_card_id_sends_nothing() -> None:
    assert body("c" * 70_000, "Done.") is None
    assert body("c" * 70_000, "") == {"session_id": "c" * 70_000, "unanswered": "blank"}


@settings(deadline=None)
@given(WITH_SURROGATES)
def test_any_message_makes_a_sendable_body(message: str) -> None:
    built = body("card-1", message)
    assert built is not None
    reply = validate("mod/answer", orjson.dumps(built))
    assert reply.status == 204, reply.reason
