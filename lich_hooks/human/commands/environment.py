"""What a human command may read and write, as one value (httpie's pattern): the group builds it
from the process, a test around a StringIO and a dict; the colour it may use and the exit code it
returns."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import TextIO

import click


class ExitCode(IntEnum):
    """One meaning each, so a script tells "doctor found a problem" from "lich-hook itself broke"
    and from a usage mistake. Hooks always exit 0."""

    OK = 0
    PROBLEM_FOUND = 1  # doctor found something wrong, install refused, listen could not bind
    USAGE = 2  # click's own code for bad usage
    INTERNAL_ERROR = 3  # a bug: one line on stderr, the traceback under LICH_HOOK_DEBUG
    INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it


CODES = {"green": "32", "yellow": "33", "red": "31", "bold": "1", "dim": "2", "cyan": "36"}


def wanted(stream: object) -> bool:
    """Colour only for a person looking at a terminal (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def paint(text: str, colour: str, on: bool) -> str:
    return f"\x1b[{CODES[colour]}m{text}\x1b[0m" if on else text


@dataclass(frozen=True)
class Environment:
    stdout: TextIO
    stderr: TextIO
    environ: Mapping[str, str]
    cwd: str  # what `--scope project` and doctor's project checks mean
    colour: bool  # ANSI colour on stdout / stderr (wanted())
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
            colour=wanted(sys.stdout),
            stderr_colour=wanted(sys.stderr),
            executable=sys.executable,
        )

    def out(self, line: str = "") -> None:
        click.echo(line, file=self.stdout)

    def paint(self, text: str, colour: str) -> str:
        """`text` in `colour` on stdout, where colour is wanted."""
        return paint(text, colour, self.colour)

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
