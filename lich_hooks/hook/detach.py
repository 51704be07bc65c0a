"""A child that holds none of the harness's pipes: the harness waits for a hook until its
stdout and stderr reach EOF, so the sender and the pruner must let go of them."""

from __future__ import annotations

import os


def fork() -> int:
    """fork(); the child setsid()s with fds 0-2 on /dev/null. -1: no fork (Windows) or failed."""
    call = getattr(os, "fork", None)
    if call is None:
        return -1
    try:
        pid: int = call()
    except OSError:
        return -1
    if pid == 0:
        try:
            os.setsid()
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if null > 2:
            os.close(null)
    return pid
