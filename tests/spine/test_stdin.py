"""read_stdin's bounds (docs/transport.md) on both of its waits: select (POSIX) and the
reader thread Windows needs, where select does not work on a pipe."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from lich_hooks.hook.payload import read_stdin


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (write_end, read_end):  # the writer first: a reader thread still blocked ends
        try:
            os.close(fd)
        except OSError:
            pass


@pytest.mark.parametrize("poll", [True, False], ids=["select", "thread"])
def test_a_stdin_never_closed_gives_up(poll: bool, pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b'{"session_id": "never-closed"}')
    started = time.monotonic()
    assert read_stdin(read_end, seconds=0.3, poll=poll) is None
    assert time.monotonic() - started < 5  # bounded: without the bound it never returns


@pytest.mark.parametrize("poll", [True, False], ids=["select", "thread"])
def test_a_closed_stdin_is_read_whole(poll: bool, pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b'{"a": 1}')
    os.close(write_end)
    assert read_stdin(read_end, poll=poll) == b'{"a": 1}'


@pytest.mark.parametrize("poll", [True, False], ids=["select", "thread"])
def test_past_the_limit_is_none(poll: bool, pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b"x" * 11)
    os.close(write_end)
    assert read_stdin(read_end, limit=10, poll=poll) is None


@pytest.mark.parametrize("poll", [True, False], ids=["select", "thread"])
def test_an_empty_stdin_is_empty(poll: bool) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        assert read_stdin(null, poll=poll) == b""
    finally:
        os.close(null)
