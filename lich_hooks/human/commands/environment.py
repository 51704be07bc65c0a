"""What a human command may read and write, as one value (httpie's pattern): the group builds it
from the process, a test around a StringIO and a dict."""

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
    cwd: str  # what `--scope project` and doctor's project checks mean
    colour: bool  # ANSI colour on stdout / stderr (style.wanted)
    stderr_colour: bool
    executable: str  # the interpreter: its bin directory holds our console script, demo's PATH

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
        click.echo(line, file=self.stdout)

    def err(self, line: str) -> None:
        """One line for the person, never in the output (a `> file` must not swallow it)."""
        click.echo(line, file=self.stderr)


def _tolerant(stream: TextIO) -> TextIO:
    """Writes `?` for what the encoding lacks (a redirected Windows stdout is cp1252: no ✓ or ✗)."""
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    reconfigure = getattr(stream, "reconfigure", None)
    if encoding != "utf8" and reconfigure is not None:
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):
            pass
    return stream
