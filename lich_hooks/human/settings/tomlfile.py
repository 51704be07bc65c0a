"""Codex's `config.toml` for doctor: tomllib, or on 3.10 (no TOML dependency for one old Python)
`read_simple`, which reads only headers and single-line scalars the way Codex writes them and skips
anything else, so an unreadable table looks absent: "not trusted", the safe side."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\\n]|\\.)*"'
_LITERAL = r"'[^'\n]*'"
_KEY = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_DOTTED = rf"{_KEY}(?:[ \t]*\.[ \t]*{_KEY})*"
_HEADER = re.compile(rf"\[[ \t]*({_DOTTED})[ \t]*\][ \t]*(?:#.*)?")
_PAIR = re.compile(rf"({_DOTTED})[ \t]*=[ \t]*(.*)")
_PART = re.compile(rf"[ \t]*({_KEY})[ \t]*(?:\.|$)")
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_SCALAR = re.compile(rf"({_BASIC}|{_LITERAL}|true|false|[+-]?[0-9][0-9_]*)[ \t]*(?:#.*)?")


class TomlError(Exception):
    """The file is not TOML (tomllib's verdict; the small reader never raises it)."""


def loads(text: str) -> dict[str, object]:
    """The document: tomllib's where it exists, else the subset `read_simple` reads."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            document: dict[str, object] = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise TomlError(str(error)) from None
        return document
    return read_simple(text)


def _unquote(key: str) -> str:
    if key.startswith("'"):
        return key[1:-1]
    if key.startswith('"'):
        return _basic_string(key)
    return key


def _basic_string(token: str) -> str:
    def unescape(match: re.Match[str]) -> str:
        code = match[1] or match[2]
        if code:
            return chr(int(code, 16))
        if match[3] not in _ESCAPES:
            raise ValueError(f"bad escape \\{match[3]}")
        return _ESCAPES[match[3]]

    return _ESCAPE.sub(unescape, token[1:-1])


def _split(dotted: str) -> list[str]:
    parts = []
    pos = 0
    while pos < len(dotted):
        match = _PART.match(dotted, pos)
        if match is None:
            raise ValueError(dotted)
        parts.append(_unquote(match.group(1)))
        pos = match.end()
    return parts


def _value(raw: str) -> object:
    match = _SCALAR.fullmatch(raw.strip())
    if match is None:
        raise ValueError(raw)
    token = match.group(1)
    if token[0] in "\"'":
        return _unquote(token)
    if token in ("true", "false"):
        return token == "true"  # noqa: S105 (a TOML boolean, not a password)
    return int(token.replace("_", ""))


def _lines(text: str) -> Iterator[str]:
    """Logical lines, with multi-line strings left out (they may hold `[…]` lines)."""
    inside: str | None = None
    for line in text.splitlines():
        if inside is not None:
            if inside in line:
                inside = None
            continue
        for fence in ('"""', "'''"):
            if line.count(fence) % 2 == 1:
                inside = fence
        if inside is None:
            yield line.strip()


def read_simple(text: str) -> dict[str, object]:
    """The tables and simple values of a TOML document (see the module docstring)."""
    root: dict[str, object] = {}
    table = root
    for line in _lines(text):
        if not line or line.startswith("#"):
            continue
        try:
            if line.startswith("["):
                header = _HEADER.fullmatch(line)
                if header is None:  # an array of tables, or a line inside an array
                    table = {}
                    continue
                table = root
                for part in _split(header.group(1)):
                    child = table.setdefault(part, {})
                    table = child if isinstance(child, dict) else {}
                continue
            pair = _PAIR.fullmatch(line)
            if pair is None:
                continue
            keys = _split(pair.group(1))
            value = _value(pair.group(2))
        except (ValueError, IndexError):
            continue
        target = table
        for part in keys[:-1]:
            child = target.setdefault(part, {})
            target = child if isinstance(child, dict) else {}
        target.setdefault(keys[-1], value)
    return root
