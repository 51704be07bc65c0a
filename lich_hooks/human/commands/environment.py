"""What a human command may read from and write to its process, as one value.

The commands used to reach for sys.stderr, os.environ and os.getcwd() wherever
they needed them, and took the rest as long parameter lists (`out`, `environ`,
`project`, `color`…). An `Environment` (httpie's pattern) bundles them: the
click group builds one from the process, a test builds one around a StringIO
and a dict, and a command's signature says it touches nothing else.

Off the hook path: click and dataclasses are fine here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

import click

from lich_hooks.human.commands import style


@dataclass(frozen=True)
class Environment:
    stdout: TextIO
    stderr: TextIO
    environ: Mapping[str, str]
    # the directory `--scope project` and doctor's project checks mean
    cwd: str
    # ANSI colour on stdout / stderr: a terminal, and no NO_COLOR (style.wanted)
    colour: bool
    stderr_colour: bool
    # the interpreter running lich-hook: its bin directory holds this installation's
    # console script (settings.ours.this_executable) and is what demo puts on PATH
    executable: str

    @classmethod
    def from_process(cls) -> Environment:
        """This process's streams, variables and directory, read now."""
        return cls(
            stdout=_tolerant(sys.stdout),
            stderr=_tolerant(sys.stderr),
            environ=os.environ,
            cwd=os.getcwd(),
            colour=style.wanted(sys.stdout),
            stderr_colour=style.wanted(sys.stderr),
            executable=sys.executable,
        )

    def out(self, line: str = "") -> None:
        """One line of the command's output."""
        click.echo(line, file=self.stdout)

    def err(self, line: str) -> None:
        """One line for the person, never in the output (a `> file` must not swallow it)."""
        click.echo(line, file=self.stderr)


def _tolerant(stream: TextIO) -> TextIO:
    """A stream that writes what its encoding lacks as `?` instead of raising.

    Windows gives a redirected stdout its ANSI code page (cp1252), which has
    no ✓ or ✗: `lich-hook demo > out.txt` or a pipe would end in a
    UnicodeEncodeError. The encoding stays the one the reader expects.
    """
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    reconfigure = getattr(stream, "reconfigure", None)
    if encoding != "utf8" and reconfigure is not None:
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):
            pass
    return stream
