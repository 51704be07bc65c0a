"""How the hook splits a Windows command line (lich_hooks/base/winproc.py), on any platform.

The cases are Microsoft's documented CommandLineToArgvW examples and the shapes
Codex's and Crush's processes have; subprocess.list2cmdline (how CPython quotes
for CreateProcess) must round-trip through the split.
"""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given
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


@given(st.lists(st.text(alphabet='ab \t"\\', min_size=1), min_size=1, max_size=6))
def test_cpython_quoting_round_trips(args: list[str]) -> None:
    line = subprocess.list2cmdline(["prog.exe", *args])
    assert winproc.split(line) == ["prog.exe", *args]


def test_off_windows_there_is_no_chain() -> None:
    assert winproc.ancestors(1, lambda argv: True) is None
