"""`lich-hook`: hook events first, with the standard library only; the human
commands behind a click group that is imported only when one is asked for.

A hook runs thousands of times a day, so this module decides in a few string
comparisons which of the two worlds an invocation belongs to (docs/performance.md).
"""

from __future__ import annotations

import sys

# Commands people type. Anything else is a hook event (unknown ones are no-ops).
HUMAN_COMMANDS = frozenset({"demo", "listen", "doctor", "install", "uninstall", "help", "version"})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] == "status-line":
        # Claude Code runs the status line every few hundred milliseconds: stdlib only.
        from lich_hooks.jobs.agent_cards import status_line

        return status_line.main(args[1:])
    if not args or args[0] in HUMAN_COMMANDS or args[0].startswith("-"):
        from lich_hooks.commands import run_cli

        return run_cli(args)
    from lich_hooks import hook

    return hook.main_from_argv(args)
