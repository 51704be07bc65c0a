"""`lich-hook status-line`: not built yet; prints nothing."""

from __future__ import annotations


def main(args: list[str]) -> int:
    return 0
