"""`lich-hook`: hook events first, with the standard library only; the human commands behind a click
group imported only when one is asked for (docs/architecture.md)."""

from __future__ import annotations

import os
import sys

# Commands people type. Anything else is a hook event (unknown ones are no-ops).
HUMAN_COMMANDS = frozenset({"demo", "listen", "doctor", "install", "uninstall", "help", "version"})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    status_line_help = args[:1] == ["status-line"] and args[1:2] in (["-h"], ["--help"])
    if args[:1] == ["status-line"] and not status_line_help:
        # Claude Code runs the status line every few hundred milliseconds: stdlib only.
        from lich_hooks.hook import status_line

        return finish(status_line.main(args[1:]), argv is None)
    # Its help, like every command's, is click's.
    if not args or args[0] in HUMAN_COMMANDS or args[0].startswith("-") or status_line_help:
        from lich_hooks.human.commands import run_cli

        return run_cli(args)
    from lich_hooks.hook import run as hook

    return finish(hook.main_from_argv(args), argv is None)


def plugin_main(args: list[str], handoff: tuple[int, str] | None = None) -> int:
    """plugin/boot.py's hook runner, told it is the plugin (hook/claim.py); `handoff`: the
    launcher's pid and private folder, where stdout is a file of it (hook/handoff.py)."""
    from lich_hooks.hook import run as hook

    return finish(hook.main_from_argv(args, plugin=True, handoff=handoff), True)


def finish(code: int, whole_process: bool) -> int:
    """End a hook without the interpreter's teardown (~15% of `python -c pass`, docs/performance.md)
    that it has no use for; only Python's buffers are flushed. A caller's own argv: left alone."""
    if not whole_process:
        return code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: S110 - a closed pipe must not cost the exit code
            pass
    os._exit(code)
