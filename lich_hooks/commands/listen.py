"""`lich-hook listen`: the stand-in for lich alone, printing each report."""

from __future__ import annotations

import sys
import threading

from lich_hooks.standin.server import Received, StandIn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def run(port: int, out: Callable[[str], None] = print, stop: threading.Event | None = None) -> int:
    def show(received: Received) -> None:
        out(received.summary())

    try:
        standin = StandIn(port=port, on_request=show)
    except OSError as error:  # the port is taken, or not ours to bind
        print(
            f"lich-hook listen: cannot listen on 127.0.0.1:{port}: {error.strerror}",
            file=sys.stderr,
        )
        return 1
    with standin as lich:
        out("lich stand-in listening; in the shell you test from, run:")
        for key, value in lich.env("listen-card").items():
            out(f"export {key}={value}")
        out("(Ctrl-C to stop)")
        try:
            (stop or threading.Event()).wait()
        except KeyboardInterrupt:
            pass
    return 0
