"""One hook run's debug lines and log line (docs/troubleshooting.md): nothing without
LICH_HOOK_DEBUG or LICH_HOOK_LOG, and never the token."""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# LICH_HOOK_DEBUG's off spellings (case and spaces aside): setting it to anything else asks for it.
DEBUG_OFF = ("", "0", "false", "no", "off")


def debug_wanted(environ: Mapping[str, str]) -> bool:
    return environ.get("LICH_HOOK_DEBUG", "").strip().lower() not in DEBUG_OFF


class RunLog:
    __slots__ = ("_debug", "_path", "_secret", "fields", "started")

    def __init__(self, environ: Mapping[str, str], started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        self._debug = debug_wanted(environ)
        self._path = environ.get("LICH_HOOK_LOG") or None
        self._secret = environ.get("LICH_TOKEN") or None
        self.fields: dict[str, object] = {}

    def set(self, **fields: object) -> None:
        self.fields.update(fields)

    def debug(self, message: str) -> None:
        if self._debug:
            try:
                sys.stderr.write("lich-hook: " + self._scrub(message) + "\n")
                sys.stderr.flush()
            except Exception:  # noqa: S110 - a closed stderr must not break the turn
                pass

    def elapsed_ms(self) -> float:
        return round((time.monotonic() - self.started) * 1000, 1)

    def write(self) -> None:
        if self._path is None:
            return
        try:
            import json

            record = {"ts": round(time.time(), 3), "pid": os.getpid(), **self.fields}
            record.setdefault("ms", self.elapsed_ms())
            # Scrub, then encode: the encoded line could hide an escaped token
            record = {key: self.scrub(value) for key, value in record.items()}
            line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
            # O_NONBLOCK: a FIFO nobody reads fails the open instead of blocking the hook forever
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
            fd = os.open(self._path, flags, 0o600)
            try:
                os.write(fd, line.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except Exception as error:
            self.debug(f"log not written: {type(error).__name__}")

    def scrub(self, value: object) -> object:
        if isinstance(value, str):
            return self._scrub(value)
        if isinstance(value, (list, tuple)):
            return [self.scrub(item) for item in value]
        if isinstance(value, dict):
            return {key: self.scrub(item) for key, item in value.items()}
        return value

    def _scrub(self, text: str) -> str:
        """Raw and URL-encoded token marked with NUL first (no environ value holds one), so one
        replacement cannot match inside the other."""
        if self._secret:
            from lich_hooks.base.lichenv import quote_token

            encoded = quote_token(self._secret)
            for form in sorted({self._secret, encoded}, key=len, reverse=True):
                text = text.replace(form, "\0")
            text = text.replace("\0", "<token>")
        return text
