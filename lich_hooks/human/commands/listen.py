"""`lich-hook listen`: the stand-in for lich alone, printing each report."""

from __future__ import annotations

import sys
import threading

from lich_hooks.human.commands.environment import Environment, ExitCode
from lich_hooks.human.standin.server import StandIn


def run(environment: Environment, port: int, stop: threading.Event | None = None) -> ExitCode:
    try:
        standin = StandIn(
            port=port, on_request=lambda received: environment.out(received.summary())
        )
    except OSError as error:  # the port is taken, or not ours to bind
        environment.err(f"lich-hook listen: cannot listen on 127.0.0.1:{port}: {error.strerror}")
        return ExitCode.PROBLEM_FOUND
    with standin as lich:
        variables = lich.env("listen-card")
        if sys.platform == "win32":
            environment.out("lich stand-in listening; in the cmd.exe you test from, run:")
            for key, value in variables.items():
                environment.out(f"set {key}={value}")
            powershell = "; ".join(f'$env:{key}="{value}"' for key, value in variables.items())
            environment.out(f"(PowerShell: {powershell})")
        else:
            environment.out("lich stand-in listening; in the shell you test from, run:")
            for key, value in variables.items():
                environment.out(f"export {key}={value}")
        environment.out("(Ctrl-C to stop)")
        try:
            (stop or threading.Event()).wait()
        except KeyboardInterrupt:
            pass
    return ExitCode.OK
