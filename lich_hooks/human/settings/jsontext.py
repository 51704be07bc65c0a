"""Edit a JSON(C) settings file as text, changing only what changed (docs/install.md: bytes and
comments kept). The result is re-parsed and compared with the intended document; a splice that does
not round-trip is refused with comments, else written as a clean dump."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsonTextError(Exception):
    """The text is not a document we can edit (the file is left untouched)."""


@dataclass(eq=False, slots=True)
class Node:
    """A value with its span in the text: [start, end)."""

    start: int
    end: int
    value: object
    items: list[Node] = field(default_factory=list)  # array elements, or object member values
    starts: list[int] = field(default_factory=list)  # where each element (or member's key) starts
    keys: list[str] = field(default_factory=list)  # object members' keys


@dataclass(eq=False)
class Parsed:
    """A parsed document: its root node and where its comments are."""

    text: str
    root: Node | None
    comments: list[tuple[int, int]]


class _Parser:
    def __init__(self, text: str, jsonc: bool) -> None:
        self.text = text
        self.jsonc = jsonc
        self.comments: list[tuple[int, int]] = []

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return f"line {line}, column {col}"

    def fail(self, pos: int, what: str) -> JsonTextError:
        return JsonTextError(f"{what} at {self.where(pos)}")

    def skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text):
            char = text[pos]
            if char in " \t\r\n" or (char == "\ufeff" and pos == 0):
                pos += 1
            elif text.startswith("//", pos) or text.startswith("/*", pos):
                if not self.jsonc:
                    raise self.fail(pos, "a comment (this file must be plain JSON)")
                if text.startswith("//", pos):
                    end = text.find("\n", pos)
                    end = len(text) if end < 0 else end
                else:
                    close = text.find("*/", pos + 2)
                    if close < 0:
                        raise self.fail(pos, "an unclosed comment")
                    end = close + 2
                self.comments.append((pos, end))
                pos = end
            else:
                break
        return pos

    def value(self, pos: int, depth: int = 0) -> Node:
        if depth > 200:
            raise self.fail(pos, "nesting too deep")
        pos = self.skip(pos)
        text = self.text
        if pos >= len(text):
            raise self.fail(pos, "a missing value")
        char = text[pos]
        if char in "{[":
            return self.container(pos, depth, "}" if char == "{" else "]")
        if char == '"':
            string, end = self.string(pos, "an invalid string")
            return Node(pos, end, string)
        for word, literal in _LITERALS.items():
            if text.startswith(word, pos):
                return Node(pos, pos + len(word), literal)
        match = _NUMBER.match(text, pos)
        if match:
            return Node(pos, match.end(), json.loads(match.group()))
        raise self.fail(pos, f"an unexpected {char!r}")

    def string(self, pos: int, invalid: str) -> tuple[str, int]:
        """The string starting at `pos` and where it ends."""
        text = self.text
        i = pos + 1
        while i < len(text) and text[i] not in '"\n':
            i += 2 if text[i] == "\\" else 1
        if not text.startswith('"', i):
            raise self.fail(pos, "an unterminated string")
        try:
            return json.loads(text[pos : i + 1]), i + 1
        except ValueError:
            raise self.fail(pos, invalid) from None

    def container(self, start: int, depth: int, close: str) -> Node:
        text = self.text
        is_object = close == "}"
        node = Node(start, start, {} if is_object else [])
        pos = self.skip(start + 1)
        if text.startswith(close, pos):
            node.end = pos + 1
            return node
        while True:
            if is_object:
                if not text.startswith('"', pos):
                    raise self.fail(pos, "an object key expected")
                key_start = pos
                key, pos = self.string(pos, "an invalid key")
                pos = self.skip(pos)
                if not text.startswith(":", pos):
                    raise self.fail(pos, "':' expected")
                child = self.value(pos + 1, depth + 1)
                node.keys.append(key)
                node.starts.append(key_start)
                node.items.append(child)
                assert isinstance(node.value, dict)
                node.value[key] = child.value
            else:
                child = self.value(pos, depth + 1)
                node.starts.append(child.start)
                node.items.append(child)
                assert isinstance(node.value, list)
                node.value.append(child.value)
            pos = self.skip(child.end)
            comma = text.startswith(",", pos)
            if comma:
                pos = self.skip(pos + 1)
            if text.startswith(close, pos):
                if comma and not self.jsonc:
                    raise self.fail(pos, "a trailing comma")
                node.end = pos + 1
                return node
            if not comma:
                raise self.fail(pos, f"',' or '{close}' expected")


def parse(text: str, jsonc: bool = False) -> Parsed:
    """Parse `text`; an empty (or blank) text is a document with no root."""
    parser = _Parser(text, jsonc)
    pos = parser.skip(0)
    if pos >= len(text):
        return Parsed(text, None, parser.comments)
    root = parser.value(pos)
    end = parser.skip(root.end)
    if end < len(text):
        raise parser.fail(end, "text after the document")
    return Parsed(text, root, parser.comments)


def same(a: object, b: object) -> bool:
    """JSON equality: `1` is not `true` nor `1.0`; the order of an object's keys does not count."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def dumps(value: object, indent: str = "  ") -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False)


def detect_indent(text: str) -> str:
    """The file's indentation unit: the smallest leading whitespace of an indented line."""
    best: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if not stripped or stripped == line:
            continue
        lead = line[: len(line) - len(stripped)]
        if lead.startswith("\t"):
            return "\t"
        if best is None or len(lead) < len(best):
            best = lead
    return best or "  "


class _Editor:
    def __init__(self, parsed: Parsed) -> None:
        self.text = parsed.text
        self.comments = parsed.comments
        self.unit = detect_indent(self.text)
        self.newline = "\r\n" if "\r\n" in self.text else "\n"
        self.splices: list[tuple[int, int, str]] = []

    def line_indent(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        lead = self.text[line_start:pos]
        return lead[: len(lead) - len(lead.lstrip(" \t"))]

    def starts_line(self, pos: int) -> bool:
        line_start = self.text.rfind("\n", 0, pos) + 1
        return self.text[line_start:pos].strip(" \t") == ""

    def render(self, value: object, indent: str) -> str:
        text = dumps(value, self.unit)
        return text.replace("\n", self.newline + indent)

    def splice(self, start: int, end: int, replacement: str) -> None:
        for c_start, c_end in self.comments:
            if c_start < end and c_end > start:
                where = _Parser(self.text, True).where(c_start)
                raise JsonTextError(
                    f"the change would remove the comment at {where}; edit this part by hand"
                )
        self.splices.append((start, end, replacement))

    def edit(self, node: Node, new: object) -> None:
        if same(node.value, new):
            return
        if isinstance(node.value, dict) and isinstance(new, dict):
            self.edit_object(node, new)
        elif isinstance(node.value, list) and isinstance(new, list):
            self.edit_array(node, new)
        else:
            self.splice(node.start, node.end, self.render(new, self.line_indent(node.start)))

    def edit_object(self, node: Node, new: dict[str, object]) -> None:
        assert isinstance(node.value, dict)
        # With duplicate keys the last one is the value: only it is edited, the shadowed ones
        # keep their bytes; a key that goes loses every occurrence, or a shadowed one would win.
        last = {key: i for i, key in enumerate(node.keys)}
        removed = [i for i, key in enumerate(node.keys) if key not in new]
        for key, i in last.items():
            if key in new:
                self.edit(node.items[i], new[key])
        added = [
            (json.dumps(key, ensure_ascii=False) + ": ", value)
            for key, value in new.items()
            if key not in node.value
        ]
        self.remove_elements(node, removed, added)

    def edit_array(self, node: Node, new: list[object]) -> None:
        old = node.value
        assert isinstance(old, list)
        # Pure deletions: `new` is `old` with some elements taken out.
        if len(new) < len(old):
            removed: list[int] = []
            j = 0
            for i, item in enumerate(old):
                if j < len(new) and same(item, new[j]):
                    j += 1
                else:
                    removed.append(i)
            if j == len(new):
                self.remove_elements(node, removed, [])
                return
        # Otherwise: edit in place pairwise, then drop or append the rest.
        for i in range(min(len(old), len(new))):
            self.edit(node.items[i], new[i])
        extra = [("", value) for value in new[len(old) :]]
        self.remove_elements(node, list(range(len(new), len(old))), extra)

    def remove_elements(
        self, node: Node, removed: list[int], added: list[tuple[str, object]]
    ) -> None:
        """Delete elements `removed` (by index) and append `added` (prefix, value) pairs."""
        count = len(node.items)
        kept = [i for i in range(count) if i not in removed]
        if not kept:
            if not added:
                if count:
                    self.splice(node.start + 1, node.end - 1, "")
                return
            indent = self.line_indent(node.start)
            open_, close = self.text[node.start], self.text[node.end - 1]
            inner = indent + self.unit
            body = ("," + self.newline).join(
                inner + prefix + self.render(value, inner) for prefix, value in added
            )
            self.splice(
                node.start, node.end, open_ + self.newline + body + self.newline + indent + close
            )
            return
        first_kept = kept[0]
        if first_kept > 0:
            self.splice(node.starts[0], node.starts[first_kept], "")
        for i in removed:
            if i > first_kept:
                self.splice(node.items[i - 1].end, node.items[i].end, "")
        if added:
            last = node.items[kept[-1]]
            last_start = node.starts[kept[-1]]
            multiline = "\n" in self.text[node.start : node.end]
            if multiline and self.starts_line(last_start):
                inner = self.line_indent(last_start)
                sep = "," + self.newline + inner
                text = "".join(sep + prefix + self.render(value, inner) for prefix, value in added)
            else:
                text = "".join(
                    ", " + prefix + json.dumps(value, ensure_ascii=False) for prefix, value in added
                )
            self.splice(last.end, last.end, text)

    def result(self) -> str:
        text = self.text
        for start, end, replacement in sorted(
            self.splices, key=lambda s: (s[0], s[1]), reverse=True
        ):
            text = text[:start] + replacement + text[end:]
        return text


def edit(parsed: Parsed, new: object, jsonc: bool = False) -> str:
    """`parsed`'s text changed to parse as `new`; JsonTextError rather than lose a comment."""
    if parsed.root is None:
        return dumps(new) + "\n"
    text = splice(parsed, new)
    try:
        check = parse(text, jsonc=jsonc)
    except JsonTextError:
        check = Parsed(text, None, [])
    if check.root is None or not same(check.root.value, new):
        if parsed.comments:
            raise JsonTextError("could not edit this file without losing its comments")
        # Never expected (the property tests pin it): a clean rewrite beats a wrong file.
        return dumps(new, detect_indent(parsed.text)) + "\n"
    return text


def splice(parsed: Parsed, new: object) -> str:
    """The splices alone, unchecked (`edit` checks them; tests call this directly)."""
    assert parsed.root is not None
    editor = _Editor(parsed)
    editor.edit(parsed.root, new)
    return editor.result()


def walk(value: object) -> Iterator[object]:
    """Every value inside `value`, depth first (for scans that look for commands)."""
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)
