"""The exit codes of the human commands, one meaning each.

A script running `lich-hook doctor` must tell "doctor found a problem" from
"lich-hook itself broke" (and both from a usage mistake), so each has its own
code and nothing else shares it.
Hooks are not commands: they exit 0 on every path (docs/harnesses.md).
"""

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
