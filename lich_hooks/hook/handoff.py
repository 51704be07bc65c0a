"""The plugin launcher's second way to the harness: a hook whose output could not be left whole in
its file (a full `$TMPDIR`, a candidate's child that wrote there too) hands it over through a FIFO
in the launcher's private folder instead. The hook has acted by then (an Agent call's `lich open`
ran), so running it again is no fallback; a FIFO needs an inode and no data block
(docs/install.md, "The plugin's launcher and odd Pythons")."""

from __future__ import annotations

import errno
import os
import time

NAME = "relay"  # the FIFO's name in the launcher's folder (plugin/lich-hook reads it)
# How long the launcher may take to open the FIFO; checked here, and past it the output is lost
# (the file left empty: nothing the harness would misread).
WAIT_SECONDS = 2.0
_POLL_SECONDS = 0.01


def hand_over(fd: int, data: bytes, launcher: int, folder: str) -> str:
    """Empty the file `fd` is (a partial verdict must never be copied), then give `data` to the
    launcher through its FIFO; what happened, as a word for the log."""
    try:
        os.ftruncate(fd, 0)  # frees blocks, needs none
    except OSError:
        pass
    path = os.path.join(folder, NAME)
    try:
        os.mkfifo(path, 0o600)
    except OSError:
        return "lost"
    end = time.monotonic() + WAIT_SECONDS
    while True:
        # Said again each round: the launcher may merge it with boot.py's first signal, or get
        # it just before it waits, and then only a later one wakes it.
        _signal(launcher)
        try:
            pipe = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
            break
        except OSError as error:
            if error.errno != errno.ENXIO:  # ENXIO: the launcher is not reading yet
                return "lost"
        if time.monotonic() >= end:
            return "lost"
        time.sleep(_POLL_SECONDS)
    try:
        os.set_blocking(pipe, True)
        while data:
            data = data[os.write(pipe, data) :]
        return "relayed"
    except OSError:
        return "lost"
    finally:
        os.close(pipe)


def _signal(launcher: int) -> None:
    try:
        from _signal import SIGUSR1  # type: ignore[import-not-found]  # `signal` imports enum

        # Only a launcher of our own process group: never a pid reused after it died.
        if launcher > 1 and os.getpgid(launcher) == os.getpgrp():
            os.kill(launcher, SIGUSR1)
    except (ImportError, OSError, AttributeError):
        pass
