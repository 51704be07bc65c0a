"""Colour for the human commands: on a terminal only, and never under NO_COLOR."""

from __future__ import annotations

import os
import sys

CODES = {"green": "32", "yellow": "33", "red": "31", "bold": "1", "dim": "2", "cyan": "36"}


def wanted(stream: object = None) -> bool:
    """Colour only for a person looking at a terminal (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    target = sys.stdout if stream is None else stream
    isatty = getattr(target, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def paint(text: str, colour: str, on: bool) -> str:
    return f"\x1b[{CODES[colour]}m{text}\x1b[0m" if on else text
