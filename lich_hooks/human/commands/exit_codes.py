"""The exit codes of the human commands, one meaning each, so a script tells "doctor found a
problem" from "lich-hook itself broke" and from a usage mistake. Hooks always exit 0."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    # doctor found something wrong, install refused a file, listen could not bind
    PROBLEM_FOUND = 1
    # click's own code for bad usage (a missing argument, an unknown option)
    USAGE = 2
    # a bug in lich-hook: one line on stderr, the traceback under LICH_HOOK_DEBUG
    INTERNAL_ERROR = 3
    # Ctrl-C: 128 + SIGINT, what a shell reports for a process the signal ended
    INTERRUPTED = 130
