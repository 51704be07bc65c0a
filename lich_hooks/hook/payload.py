"""The harness's JSON payload, read within bounds (docs/transport.md) and parsed without importing
`json` (docs/performance.md). Anything but a JSON object is None: nothing to do."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BYTES = 8 * 1024 * 1024
READ_SECONDS = 2.0

_WHITESPACE = " \t\n\r"


def read_stdin(
    fd: int = 0,
    limit: int = MAX_BYTES,
    seconds: float = READ_SECONDS,
    poll: bool = os.name != "nt",
) -> bytes | None:
    """None when too large, unreadable, or not closed in time. Windows cannot select on a pipe
    (`poll` False): a thread reads, abandoned at the deadline."""
    if not poll:
        return _read_in_thread(fd, limit, seconds)
    import select

    deadline = time.monotonic() + seconds

    def ready() -> bool:
        left = deadline - time.monotonic()
        return left > 0 and bool(select.select([fd], [], [], left)[0])

    try:
        return _read_all(fd, limit, ready)
    except (OSError, ValueError):
        return None


def _read_all(fd: int, limit: int, ready: Callable[[], bool] | None = None) -> bytes | None:
    chunks: list[bytes] = []
    total = 0
    while ready is None or ready():
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            return None
        chunks.append(chunk)
    return None


def _read_in_thread(fd: int, limit: int, seconds: float) -> bytes | None:
    """The hook's os._exit does not wait for a thread a harness left blocked."""
    import threading

    result: list[bytes | None] = []

    def pump() -> None:
        try:
            result.append(_read_all(fd, limit))
        except (OSError, ValueError):
            result.append(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    reader.join(seconds)
    return result[0] if result else None


class _ScanContext:
    """`json.loads`'s values for what `_json.make_scanner` reads."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))


_scan: Callable[[str, int], tuple[object, int]] | None = None


def _scanner() -> Callable[[str, int], tuple[object, int]]:
    """The C scanner, else `json`'s own (PyPy): without it every payload would be "not JSON"."""
    try:
        import _json

        scan: Callable[[str, int], tuple[object, int]] = _json.make_scanner(
            _ScanContext()  # type: ignore[arg-type]
        )
        return scan
    except ImportError:
        import json

        return json.JSONDecoder().raw_decode


def loads_object(data: bytes) -> dict[str, object] | None:
    value = _loads(data, "{")
    return value if isinstance(value, dict) else None


def loads_array(data: bytes | str) -> list[object] | None:
    """Text lets a caller drop the bytes first (a bounded peak)."""
    value = _loads(data, "[")
    return value if isinstance(value, list) else None


def _loads(data: bytes | str, opener: str) -> object:
    global _scan
    try:
        text = data if isinstance(data, str) else data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text[:1] == "\ufeff":
        text = text[1:]
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if text[start : start + 1] != opener:
        return None
    try:
        if _scan is None:
            _scan = _scanner()
        value, end = _scan(text, start)
    except Exception:  # StopIteration, JSONDecodeError, RecursionError: all "not JSON"
        return None
    if text[end:].strip(_WHITESPACE):
        return None
    return value


class Payload:
    __slots__ = ("data",)

    def __init__(self, data: dict[str, object]) -> None:
        self.data = data

    def get(self, key: str) -> object:
        return self.data.get(key)

    def text(self, *keys: str) -> str | None:
        for key in keys:
            value = self.data.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    @property
    def session_id(self) -> str | None:
        """Antigravity's spelling wins (docs/session-start.md)."""
        return self.text("conversationId", "session_id")

    @property
    def transcript_path(self) -> str | None:
        return self.text("transcriptPath", "transcript_path")
