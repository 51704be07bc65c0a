"""What one hook run tells the person debugging it, and nobody else.

SPEC §8: `LICH_HOOK_DEBUG=1` prints one line per decision to stderr;
`LICH_HOOK_LOG=<file>` appends one JSON line per run. Without either, a run
prints nothing to stderr and imports nothing for logging. The token is never
written: it is scrubbed from every value before anything leaves this module.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_FALSY = ("", "0", "false", "no", "off")


class RunLog:
    __slots__ = ("_debug", "_path", "_secret", "fields", "started")

    def __init__(self, environ: Mapping[str, str], started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        self._debug = environ.get("LICH_HOOK_DEBUG", "").strip().lower() not in _FALSY
        self._path = environ.get("LICH_HOOK_LOG") or None
        self._secret = environ.get("LICH_TOKEN") or None
        self.fields: dict[str, object] = {}

    @property
    def enabled(self) -> bool:
        return self._debug or self._path is not None

    def set(self, **fields: object) -> None:
        self.fields.update(fields)

    def debug(self, message: str) -> None:
        """One decision, on stderr, only under LICH_HOOK_DEBUG."""
        if self._debug:
            try:
                sys.stderr.write("lich-hook: " + self._scrub(message) + "\n")
                sys.stderr.flush()
            except Exception:  # noqa: S110 - a closed stderr must not break the turn
                pass

    def elapsed_ms(self) -> float:
        return round((time.monotonic() - self.started) * 1000, 1)

    def write(self) -> None:
        """Append this run's JSON line to LICH_HOOK_LOG (best-effort)."""
        if self._path is None:
            return
        try:
            import json

            record = {"ts": round(time.time(), 3), "pid": os.getpid(), **self.fields}
            record.setdefault("ms", self.elapsed_ms())
            line = self._scrub(json.dumps(record, ensure_ascii=False, default=str)) + "\n"
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except Exception as error:
            self.debug(f"log not written: {type(error).__name__}")

    def _scrub(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "<token>")
            from urllib.parse import quote

            text = text.replace(quote(self._secret, safe=""), "<token>")
        return text
