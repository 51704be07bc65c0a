"""The pure parts of the spine, as properties: payload parsing agrees with the
standard json module, event/provider folding and port parsing follow
docs/architecture.md and docs/transport.md."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.base import harnesses as harness
from lich_hooks.base import lichenv
from lich_hooks.base.homes import file_key
from lich_hooks.hook.payload import Payload, loads_object

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None)
@given(st.dictionaries(st.text(), JSON, max_size=6))
def test_loads_object_reads_what_json_writes(value: dict[str, object]) -> None:
    for encoded in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        assert loads_object(encoded.encode("utf-8")) == value


@settings(deadline=None)
@given(st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode())))
def test_loads_object_agrees_with_json_on_any_bytes(raw: bytes) -> None:
    """None exactly where json.loads (after a BOM, which harnesses may send) gives no object."""
    try:
        expected = json.loads(raw.decode("utf-8").removeprefix("\ufeff"))
    except (UnicodeDecodeError, ValueError):
        expected = None
    got = loads_object(raw)
    if isinstance(expected, dict):
        assert json.dumps(got) == json.dumps(expected)  # NaN-safe equality
    else:
        assert got is None


@settings(deadline=None)
@given(JSON)
def test_non_objects_are_none(value: object) -> None:
    if not isinstance(value, dict):
        assert loads_object(json.dumps(value).encode()) is None


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(["session_id", "conversationId", "x"]), JSON))
def test_session_id_is_a_non_empty_string_or_none(data: dict[str, object]) -> None:
    got = Payload(data).session_id
    conv, sid = data.get("conversationId"), data.get("session_id")
    if isinstance(conv, str) and conv:
        assert got == conv
    elif isinstance(sid, str) and sid:
        assert got == sid
    else:
        assert got is None


@settings(deadline=None)
@given(
    st.sampled_from(sorted(harness.EVENTS.values())),
    st.lists(st.booleans(), min_size=30, max_size=30),
    st.sampled_from(["", "-", "_"]),
)
def test_every_spelling_of_an_event_folds_to_it(event: str, upper: list[bool], sep: str) -> None:
    # case flips anywhere, and a separator before each interior capital
    spelled = ""
    for i, char in enumerate(event):
        if i and char.isupper():
            spelled += sep
        spelled += char.upper() if upper[i] else char.lower()
    assert harness.fold_event(spelled) == event


@settings(deadline=None)
@given(st.text(max_size=20))
def test_unknown_providers_are_none(raw: str) -> None:
    folded = harness.fold_provider(raw)
    assert folded == (raw.lower() if raw.lower() in harness.ROUTES else None)


@settings(deadline=None)
@given(st.text(max_size=8))
def test_port_is_plain_decimal_in_range(raw: str) -> None:
    plain = raw.isascii() and raw.isdigit() and 0 < len(raw) <= 5
    expected = int(raw) if plain and 1 <= int(raw) <= 65535 else None
    assert lichenv.parse_port(raw) == expected


@settings(deadline=None)
@given(st.text(max_size=300))
def test_file_key_stays_in_the_directory(card: str) -> None:
    key = file_key(card)
    assert key and "/" not in key and "\\" not in key and key not in (".", "..")
    assert len(key) <= 100 and key.isascii()
    assert file_key(card) == key
