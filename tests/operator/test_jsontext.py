"""The text-preserving JSON(C) editor behind `install`: properties and pinned cases."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.human.settings import jsontext

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
documents = st.dictionaries(st.text(max_size=5), values, max_size=5)


@st.composite
def changed(draw: st.DrawFn, document: dict[str, object]) -> dict[str, object]:
    """`document` with keys dropped, values replaced and keys added, like a merge does."""
    result: dict[str, object] = {}
    for key, value in document.items():
        action = draw(st.sampled_from(["keep", "drop", "replace", "nested"]))
        if action == "keep":
            result[key] = value
        elif action == "replace":
            result[key] = draw(values)
        elif action == "nested" and isinstance(value, dict):
            result[key] = draw(changed(value))
        elif action == "nested" and isinstance(value, list):
            kept = [v for v in value if draw(st.booleans())]
            result[key] = kept + draw(st.lists(values, max_size=2))
        elif action != "drop":
            result[key] = value
    for key, value in draw(st.dictionaries(st.text(max_size=5), values, max_size=2)).items():
        result.setdefault(key, value)
    return result


@pytest.mark.slow
@given(st.data(), documents, st.sampled_from([None, 2, 4, "\t"]))
@settings(max_examples=300, deadline=None)
def test_edit_always_parses_to_the_new_document(
    data: st.DataObject, document: dict[str, object], indent: int | str | None
) -> None:
    text = json.dumps(document, indent=indent, ensure_ascii=False) + "\n"
    parsed = jsontext.parse(text)
    assert parsed.root is not None and jsontext.same(parsed.root.value, document)
    new = data.draw(changed(document))
    result = jsontext.splice(parsed, new)  # no fallback: the splices themselves are right
    again = jsontext.parse(result)
    assert again.root is not None and jsontext.same(again.root.value, json.loads(json.dumps(new)))
    if jsontext.same(document, new):
        assert result == text


def test_untouched_members_keep_their_bytes() -> None:
    text = '{\n  "a":   [1,2,3],  "b" : {"x":1},\n  "c": "z"\n}\n'
    parsed = jsontext.parse(text)
    result = jsontext.edit(parsed, {"a": [1, 2, 3], "b": {"x": 2}, "c": "z", "d": True})
    assert result == '{\n  "a":   [1,2,3],  "b" : {"x":2},\n  "c": "z",\n  "d": true\n}\n'


def test_deleting_members_and_elements() -> None:
    text = '{\n  "a": 1,\n  "b": [1, 2, 3],\n  "c": 3\n}\n'
    parsed = jsontext.parse(text)
    assert jsontext.edit(parsed, {"b": [1, 3], "c": 3}) == '{\n  "b": [1, 3],\n  "c": 3\n}\n'
    assert jsontext.edit(parsed, {"a": 1}) == '{\n  "a": 1\n}\n'
    assert jsontext.edit(parsed, {}) == "{}\n"


def test_crlf_and_tabs_are_followed() -> None:
    text = '{\r\n\t"a": [\r\n\t\t1\r\n\t]\r\n}\r\n'
    result = jsontext.edit(jsontext.parse(text), {"a": [1, {"k": 2}]})
    assert result == '{\r\n\t"a": [\r\n\t\t1,\r\n\t\t{\r\n\t\t\t"k": 2\r\n\t\t}\r\n\t]\r\n}\r\n'


def test_jsonc_comments_survive_and_are_never_silently_dropped() -> None:
    text = '{\n  // keep\n  "a": 1, /* and */\n  "b": [1, 2,],\n}\n'
    parsed = jsontext.parse(text, jsonc=True)
    assert parsed.root is not None and parsed.root.value == {"a": 1, "b": [1, 2]}
    result = jsontext.edit(parsed, {"a": 1, "b": [1, 2, 3]}, jsonc=True)
    assert "// keep" in result and "/* and */" in result
    assert jsontext.parse(result, jsonc=True).root.value == {"a": 1, "b": [1, 2, 3]}  # type: ignore[union-attr]
    commented = '{\n  "a": 1, // about a\n  "b": 2\n}\n'
    with pytest.raises(jsontext.JsonTextError, match="comment"):
        jsontext.edit(jsontext.parse(commented, jsonc=True), {"b": 2}, jsonc=True)


@pytest.mark.parametrize(
    "text",
    ['{"a": 1,}', "// x\n{}", '{"a": 1', "{'a': 1}", '{"a": 1} x', '{"a": NaN}', '["\n"]'],
)
def test_strict_json_refuses(text: str) -> None:
    with pytest.raises(jsontext.JsonTextError):
        jsontext.parse(text)


def test_same_tells_booleans_from_numbers() -> None:
    assert not jsontext.same({"a": 1}, {"a": True})
    assert not jsontext.same([1], [1.0])
    assert jsontext.same({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})


def test_empty_text_is_no_document() -> None:
    parsed = jsontext.parse("  \n")
    assert parsed.root is None
    assert jsontext.edit(parsed, {"a": 1}) == '{\n  "a": 1\n}\n'


# --- JSONC: a comment is kept or the edit is refused, never dropped silently -----------

plain_text = st.text(alphabet="abcxyz 09", max_size=5)
plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(-99, 99) | plain_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(plain_text, inner, max_size=3),
    max_leaves=10,
)
plain_documents = st.dictionaries(plain_text, plain_values, max_size=4)


@st.composite
def commented(draw: st.DrawFn, document: dict[str, object]) -> tuple[str, list[str]]:
    """`document` as JSONC with comments after some commas and opening brackets."""
    text = json.dumps(document, indent=2)
    out: list[str] = []
    notes: list[str] = []
    for char in text:
        out.append(char)
        if char in ",[{" and draw(st.integers(0, 3)) == 0:
            note = f"c{len(notes)}"
            notes.append(note)
            out.append(f" /* {note} */" if draw(st.booleans()) else f" // {note}\n")
    return "".join(out) + "\n", notes


@pytest.mark.slow
@given(st.data(), plain_documents)
@settings(max_examples=200, deadline=None)
def test_jsonc_edits_keep_every_comment_or_refuse(
    data: st.DataObject, document: dict[str, object]
) -> None:
    text, notes = data.draw(commented(document))
    parsed = jsontext.parse(text, jsonc=True)
    assert parsed.root is not None and jsontext.same(parsed.root.value, document)
    new = data.draw(changed(document))
    try:
        result = jsontext.edit(parsed, new, jsonc=True)
    except jsontext.JsonTextError as error:
        assert "comment" in str(error)
        return
    again = jsontext.parse(result, jsonc=True)
    assert again.root is not None and jsontext.same(again.root.value, new)
    for note in notes:
        assert note in result
