"""The exit codes of the human commands, one meaning each, so a script tells "doctor found a
problem" from "lich-hook itself broke" and from a usage mistake. Hooks always exit 0."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    PROBLEM_FOUND = 1  # doctor found something wrong, install refused, listen could not bind
    USAGE = 2  # click's own code for bad usage
    INTERNAL_ERROR = 3  # a bug: one line on stderr, the traceback under LICH_HOOK_DEBUG
    INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it
