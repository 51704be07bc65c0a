"""The last assistant message of a Claude Code transcript, read backwards in blocks
(docs/worker-answer.md, "The transcript fallback"). Claude Code runs Stop before it flushes the
turn (~110 ms later, 326 ms at most measured), so `settled` re-reads an `unwritten` one for up to
SETTLE_S. The file alone cannot tell this turn from the last while this turn is unwritten: a
message is this turn's only if it was made after the previous Stop began (`after`) and no Stop
is over since it."""

from __future__ import annotations

import os

from lich_hooks.hook.payload import loads_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

MAX_BYTES = 4 << 20
BLOCK = 1 << 16
SETTLE_S = 1.5  # how long `settled` waits for an unwritten turn
POLL_S = 0.025

API_ERROR = "api-error"
# What proved a message an earlier turn's (Found.earlier)
EARLIER_FLOOR = "made-before-last-stop"
EARLIER_OVER = "its-stop-is-over"


class Found:
    __slots__ = ("earlier", "kind", "text", "unwritten")

    def __init__(
        self, kind: str, text: str = "", unwritten: bool = False, earlier: str = ""
    ) -> None:
        self.kind = kind  # "text", "none", "unreadable" or API_ERROR
        self.text = text
        self.unwritten = unwritten  # the turn's final message may still be written
        self.earlier = earlier  # the message found is an earlier turn's: what proved it


def expand(path: str, environ: Mapping[str, str]) -> str | None:
    """A leading `~` as the hook's HOME (base/homes.py); None when there is none to give."""
    if path != "~" and not path.startswith(("~/", "~" + os.sep)):
        return path
    from lich_hooks.base.homes import home

    found = home(environ)
    return None if found is None else found + path[1:]


def last_assistant(path: str, limit: int = MAX_BYTES, after: float | None = None) -> Found:
    """`after`: when the session's previous Stop began (hook/state/stops.py), None if unknown."""
    lines = _lines_from_end(path, limit)
    if lines is None:
        return Found("unreadable", unwritten=not os.path.lexists(path))
    tail = _scan(lines)
    if tail is None or not tail.group or (tail.later_users and tail.parent not in tail.later_users):
        # 2.1.45 writes its snapshot and progress lines first: the turn is still to come;
        # or the message found is an earlier turn's
        return Found("none", unwritten=True)
    earlier = tail.earlier(after)
    if earlier:
        return Found("none", unwritten=True, earlier=earlier)
    if tail.api_error:
        return Found(API_ERROR, _text_of(tail.group))
    tail.group.reverse()
    if any(_has_tool_use(message) for message in tail.group):
        return Found("none", unwritten=True)  # a tool call: the final message comes later
    return Found("text", _text_of(tail.group))


class _Tail:
    """The last assistant message's lines (last first) and what lies below it."""

    def __init__(self) -> None:
        self.group: list[dict[str, object]] = []
        self.group_id: object = None
        # User lines below the message. The turn's answer is not in the file yet, unless the
        # message answers one of them: at a first turn 2.1.45 may write its prompt (and the
        # lines before it) after its reply.
        self.later_users: set[str] = set()
        self.parent: object = None  # of the message's first line: what it answers
        self.made: object = None  # the same line's timestamp
        self.last: object = None  # the uuid of its last line: what its Stop's progress follows
        self.api_error = False
        # Below the message: the Stops whose summary is written (Claude Code writes it once all
        # of a Stop's hooks are done, so this one's cannot be yet), and the hook progress lines
        # (toolUseID, parentUuid): a Stop over since the message makes it an earlier turn's
        self.over: set[str] = set()
        self.stops: list[tuple[object, object]] = []

    def add(self, entry: dict[str, object], message: dict[str, object]) -> bool:
        """One more line of the message; True when it is the message's first (its end here)."""
        self.parent = entry.get("parentUuid")
        self.made = entry.get("timestamp")
        if not self.group:
            self.last = entry.get("uuid")
        self.api_error = not self.group and entry.get("isApiErrorMessage") is True
        self.group_id = message.get("id")
        self.group.append(message)
        # no id to gather other blocks by, or an API error: this line is the message
        return self.group_id is None or self.api_error

    def earlier(self, after: float | None) -> str:
        """What proves the message an earlier turn's, "" when nothing does."""
        last = self.last
        if isinstance(last, str) and any(up == last and s in self.over for s, up in self.stops):
            return EARLIER_OVER
        if after is not None and not _made_after(self.made, after):
            return EARLIER_FLOOR
        return ""


def _scan(lines: Iterator[bytes]) -> _Tail | None:
    """Read back to the last assistant message's first line; None at a user line with no uuid
    below it (nothing to tell its turn by)."""
    tail = _Tail()
    for line in lines:
        if not tail.group and (b'"stop_hook_summary"' in line or b'"hook_progress"' in line):
            if _noted_stop(line, tail.over, tail.stops):
                continue
        found = _conversational(line)
        if found is None:
            continue
        kind, entry, message = found
        if kind == "user" and not tail.group:
            uuid = entry.get("uuid")
            if not isinstance(uuid, str) or not uuid:
                return None
            tail.later_users.add(uuid)
            continue
        if kind == "user" or (tail.group and message.get("id") != tail.group_id):
            break
        if tail.add(entry, message):
            break
    return tail


def _conversational(line: bytes) -> tuple[str, dict[str, object], dict[str, object]] | None:
    """A main-chain user or assistant line with a message: its type, entry and message."""
    if b'"user"' not in line and b'"assistant"' not in line:
        return None  # not conversational: no need to parse it
    entry = loads_object(line)
    if entry is None or entry.get("isSidechain") is True or entry.get("isMeta") is True:
        return None
    kind = entry.get("type")
    message = entry.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    return str(kind), entry, message


def settled(path: str, wait: float = SETTLE_S, after: float | None = None) -> tuple[Found, float]:
    """`last_assistant`, re-read while the turn is unwritten, and the ms spent waiting. The
    result's `earlier` says what proved an earlier turn's message found on the way not this
    turn's."""
    import time

    found = last_assistant(path, after=after)
    if not found.unwritten:
        return found, 0.0
    earlier = found.earlier
    started = time.monotonic()
    deadline = started + wait
    while found.unwritten and time.monotonic() < deadline:
        time.sleep(POLL_S)
        found = last_assistant(path, after=after)
        earlier = earlier or found.earlier
    found.earlier = earlier
    return found, round((time.monotonic() - started) * 1000, 1)


def _noted_stop(line: bytes, over: set[str], stops: list[tuple[object, object]]) -> bool:
    """A main-chain Stop summary or hook progress line, noted; False for any other line."""
    entry = loads_object(line)
    if entry is None or entry.get("isSidechain") is True:
        return False
    stop = entry.get("toolUseID")
    if entry.get("type") == "system" and entry.get("subtype") == "stop_hook_summary":
        if isinstance(stop, str):
            over.add(stop)
        return True
    if entry.get("type") != "progress":
        return False
    # A hook's progress line. Its Stop's summary, if any, shares its toolUseID
    stops.append((stop, entry.get("parentUuid")))
    return True


def _made_after(stamp: object, floor: float) -> bool:
    """Claude Code's `timestamp` (`Date.toISOString()`, the clock the hook reads) after `floor`;
    one that is missing or not a UTC time proves nothing."""
    if not isinstance(stamp, str) or not stamp.endswith("Z"):
        return False
    from datetime import datetime

    try:
        made = datetime.fromisoformat(stamp[:-1] + "+00:00").timestamp()  # 3.10: no "Z"
    except ValueError:
        return False
    return made > floor


def _text_of(messages: list[dict[str, object]]) -> str:
    parts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "text":
                    text = block.get("text")
                    if isinstance(text, str):
                        parts.append(text)
    return "\n".join(parts)


def _has_tool_use(message: dict[str, object]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_use" for block in content
    )


def _lines_from_end(path: str, limit: int) -> Iterator[bytes] | None:
    """Non-empty lines, last first, from the last `limit` bytes; one cut by it is dropped."""
    from lich_hooks.base import safefile

    try:
        fd, info = safefile.open_regular(path)
    except (OSError, ValueError):
        return None
    return _backwards(fd, info.st_size, max(0, info.st_size - limit))


def _backwards(fd: int, end: int, start: int) -> Iterator[bytes]:
    try:
        pos = end
        # A line's pieces, joined once its start is found (no quadratic copying)
        pieces: list[bytes] = []
        while pos > start:
            size = min(BLOCK, pos - start)
            pos -= size
            chunk = _read_at(fd, size, pos)
            if len(chunk) != size:
                return  # the file shrank under us: stop, nothing half-read
            cut = chunk.find(b"\n")
            if cut < 0:
                pieces.append(chunk)
                continue
            pieces.append(chunk[cut + 1 :])
            lines = b"".join(reversed(pieces)).split(b"\n")
            for line in reversed(lines):
                if line.strip():
                    yield line
            pieces = [chunk[:cut]]
        if start == 0:
            line = b"".join(reversed(pieces))
            if line.strip():
                yield line
    except OSError:
        return
    finally:
        os.close(fd)


def _read_at(fd: int, size: int, pos: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, pos)
    os.lseek(fd, pos, os.SEEK_SET)  # Windows
    return os.read(fd, size)
