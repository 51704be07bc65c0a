"""The last assistant message of a Claude Code transcript, read backwards in blocks
(docs/worker-answer.md, "The transcript fallback"). Claude Code runs Stop before it flushes the
turn (~110 ms later, 262 ms at most measured), so `settled` re-reads an `unwritten` one for up to
SETTLE_S."""

from __future__ import annotations

import os

from lich_hooks.hook.payload import loads_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_BYTES = 4 << 20
BLOCK = 1 << 16
SETTLE_S = 1.5  # how long `settled` waits for an unwritten turn
POLL_S = 0.025

API_ERROR = "api-error"


class Found:
    __slots__ = ("kind", "text", "unwritten")

    def __init__(self, kind: str, text: str = "", unwritten: bool = False) -> None:
        self.kind = kind  # "text", "none", "unreadable" or API_ERROR
        self.text = text
        self.unwritten = unwritten  # the turn's final message may still be written

    def __repr__(self) -> str:
        return f"Found({self.kind!r}, {self.text[:40]!r})"


def last_assistant(path: str, limit: int = MAX_BYTES) -> Found:
    full = os.path.expanduser(path)
    lines = _lines_from_end(full, limit)
    if lines is None:
        return Found("unreadable", unwritten=not os.path.lexists(full))
    group: list[dict[str, object]] = []
    group_id: object = None
    # User lines below the first assistant line from the end. The turn's answer is not in the
    # file yet, unless that message answers one of them: at a first turn 2.1.45 may write its
    # prompt (and the lines before it) after its reply.
    later_users: set[str] = set()
    parent: object = None  # of the message's first line: what it answers
    api_error = False
    for line in lines:
        if b'"user"' not in line and b'"assistant"' not in line:
            continue  # not conversational: no need to parse it
        entry = loads_object(line)
        if entry is None or entry.get("isSidechain") is True or entry.get("isMeta") is True:
            continue
        kind = entry.get("type")
        if kind not in ("user", "assistant"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        if kind == "user" and not group:
            uuid = entry.get("uuid")
            if not isinstance(uuid, str) or not uuid:
                return Found("none", unwritten=True)
            later_users.add(uuid)
            continue
        if kind == "user" or (group and message.get("id") != group_id):
            break
        parent = entry.get("parentUuid")
        api_error = not group and entry.get("isApiErrorMessage") is True
        group_id = message.get("id")
        group.append(message)
        if group_id is None or api_error:
            break  # this line is the message: no id to gather other blocks by, or an API error
    if not group or (later_users and parent not in later_users):
        # 2.1.45 writes its snapshot and progress lines first: the turn is still to come;
        # or the message found is an earlier turn's
        return Found("none", unwritten=True)
    if api_error:
        return Found(API_ERROR, _text_of(group))
    group.reverse()
    if any(_has_tool_use(message) for message in group):
        return Found("none", unwritten=True)  # a tool call: the final message comes later
    return Found("text", _text_of(group))


def settled(path: str, wait: float = SETTLE_S) -> tuple[Found, float]:
    """`last_assistant`, re-read while the turn is unwritten, and the ms spent waiting."""
    import time

    found = last_assistant(path)
    if not found.unwritten:
        return found, 0.0
    started = time.monotonic()
    deadline = started + wait
    while found.unwritten and time.monotonic() < deadline:
        time.sleep(POLL_S)
        found = last_assistant(path)
    return found, round((time.monotonic() - started) * 1000, 1)


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
