"""How the hook splits a Windows command line (lich_hooks/base/winproc.py), on any platform.

The cases are Microsoft's documented CommandLineToArgvW examples and the shapes
Codex's and Crush's processes have; subprocess.list2cmdline (how CPython quotes
for CreateProcess) must round-trip through the split.
"""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.base import winproc


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ('"abc" d e', ["abc", "d", "e"]),
        (r'prog a\\\b d"e f"g h', ["prog", r"a\\\b", "de fg", "h"]),
        (r"prog a\\\"b c d", ["prog", r"a\"b", "c", "d"]),
        (r'prog a\\\\"b c" d e', ["prog", r"a\\b c", "d", "e"]),
        (r'prog a"b"" c d', ["prog", 'ab" c d']),
        (
            r'"C:\Program Files\codex\codex.exe" app-server --managed-daemon',
            [r"C:\Program Files\codex\codex.exe", "app-server", "--managed-daemon"],
        ),
        ("crush.exe  --cwd  D:\\w   server ", ["crush.exe", "--cwd", "D:\\w", "server"]),
        ("codex.exe", ["codex.exe"]),
    ],
)
def test_documented_examples(line: str, argv: list[str]) -> None:
    assert winproc.split(line) == argv


@settings(deadline=None)
@given(st.lists(st.text(alphabet='ab \t"\\', min_size=1), min_size=1, max_size=6))
def test_cpython_quoting_round_trips(args: list[str]) -> None:
    line = subprocess.list2cmdline(["prog.exe", *args])
    assert winproc.split(line) == ["prog.exe", *args]


def test_off_windows_there_is_no_chain() -> None:
    assert winproc.ancestors(1, lambda argv: True) is None


# --- the parent-chain walk over recorded Windows facts ---------------------------------

IMAGES = ("codex.exe", "cmd.exe", "python.exe", "lich-hook.exe", "explorer.exe")


def _is_codex(argv: Sequence[str]) -> bool:
    return bool(argv) and argv[0].lower() == "codex.exe"


@st.composite
def machines(
    draw: st.DrawFn,
) -> tuple[dict[int, tuple[int, str]], dict[int, int | None], dict[int, str | None], int]:
    """A process table as Toolhelp32 reports it: parents may be gone (their pid absent or
    reused by a newer process), start times or command lines unreadable."""
    pids = draw(st.lists(st.integers(1, 40), min_size=1, max_size=12, unique=True))
    table = {pid: (draw(st.integers(0, 40)), draw(st.sampled_from(IMAGES))) for pid in pids}
    times = {pid: draw(st.none() | st.integers(0, 100)) for pid in pids}
    lines = {
        pid: draw(st.none() | st.sampled_from(["x app-server --managed-daemon", "x --no-daemon"]))
        for pid in pids
    }
    return table, times, lines, draw(st.sampled_from(pids))


@settings(max_examples=500, deadline=None)
@given(machines())
def test_the_walk_follows_live_parents_only_and_never_guesses_a_harness(
    machine: tuple[dict[int, tuple[int, str]], dict[int, int | None], dict[int, str | None], int],
) -> None:
    table, times, lines, start = machine
    found = winproc.chain(table, start, _is_codex, times.get, lines.get)
    walked = [start]
    while len(walked) < 32:  # what the walk may visit: the parent links from start
        parent = table[walked[-1]][0]
        if parent not in table or parent in walked:
            break
        walked.append(parent)
    if found is None:
        # only a codex.exe on the way whose command line could not be read refuses
        assert any(table[p][1] == "codex.exe" and lines[p] is None for p in walked)
        return
    assert found and found[0][0] == start
    for (child, _), (parent, _) in itertools.pairwise(found):
        assert table[child][0] == parent
        born, parent_born = times[child], times[parent]
        if born is not None and parent_born is not None:
            assert parent_born <= born  # a newer "parent" is a reused pid
    for index, (pid, argv) in enumerate(found):
        assert argv[0] == table[pid][1]  # the image, never what the command line claims
        if _is_codex(argv):
            assert index == len(found) - 1  # the nearest codex ends it
            assert lines[pid] is not None
    assert len({pid for pid, _ in found}) == len(found)  # no loop
