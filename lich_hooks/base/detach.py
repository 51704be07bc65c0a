"""Leave the harness: a child that holds none of its pipes and none of its session.

A harness waits for a hook until the process exits AND its stdout and stderr
reach EOF; a child that kept them would keep the harness waiting. The
detached sender (transport.py) and the pruner (state/prune.py) both run in
such a child.
"""

from __future__ import annotations

import os


def fork() -> int:
    """fork(); in the child, setsid() and fds 0-2 on /dev/null. -1 when there is no fork
    (Windows) or it failed (the caller then does its work inline or not at all)."""
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
