"""The LICH_* variables (docs/transport.md), parsed strictly once per run: they end up in a URL and
an argv, so a value out of shape means "not a lich we can trust", never a guess."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PROMPT_LANGS = ("en", "pt-BR", "zh-CN", "es")

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def quote_token(token: str) -> str:
    """`urllib.parse.quote(token, safe="")` without its ~9 ms import; undecodable bytes go out
    byte for byte."""
    raw = token.encode("utf-8", "surrogateescape")
    return "".join(chr(byte) if byte in _UNRESERVED else f"%{byte:02X}" for byte in raw)


def parse_port(raw: str | None) -> int | None:
    """1–65535 in plain ASCII decimal (no signs, spaces, or other digits)."""
    if not raw or len(raw) > 5 or not (raw.isascii() and raw.isdigit()):
        return None
    port = int(raw)
    return port if 1 <= port <= 65535 else None


def parse_depth(raw: str | None) -> int | None:
    if raw is None:
        return None
    digits = raw.removeprefix("-")
    return int(raw) if digits.isascii() and digits.isdigit() else None


class LichEnv:
    __slots__ = ("bin", "card", "cards_off", "depth", "depth_set", "lang", "port", "token")

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.port = parse_port(environ.get("LICH_PORT"))
        self.token = environ.get("LICH_TOKEN") or None
        self.card = environ.get("LICH_SESSION_ID") or None
        self.bin = environ.get("LICH_BIN") or None
        self.depth_set = "LICH_SUBAGENT_DEPTH" in environ
        self.depth = parse_depth(environ.get("LICH_SUBAGENT_DEPTH"))
        self.cards_off = environ.get("LICH_SUBAGENT_CARDS", "").strip().lower() == "off"
        lang = environ.get("LICH_PROMPT_LANG", "")
        self.lang = lang if lang in PROMPT_LANGS else "en"

    @property
    def can_report(self) -> bool:
        return self.port is not None and self.token is not None and self.card is not None

    @property
    def is_worker(self) -> bool:
        """A depth above 0, or on an older lich without one, LICH_SUBAGENT_CARDS=off."""
        if self.depth_set:
            return self.depth is not None and self.depth > 0
        return self.cards_off

    def bin_is_runnable(self) -> bool:
        path = self.bin
        return (
            path is not None
            and os.path.isabs(path)
            and os.path.isfile(path)
            and os.access(path, os.X_OK)
        )
