"""`lich-hook listen`: the stand-in for lich alone, printing each report."""

from __future__ import annotations

import sys
import threading

from lich_hooks.human.commands.environment import Environment, ExitCode
from lich_hooks.human.standin.server import StandIn


def run(environment: Environment, port: int) -> ExitCode:
    try:
        standin = StandIn(port, on_request=lambda received: environment.out(received.summary()))
    except OSError as error:  # the port is taken, or not ours to bind
        environment.err(f"lich-hook listen: cannot listen on 127.0.0.1:{port}: {error.strerror}")
        return ExitCode.PROBLEM_FOUND
    with standin as lich:
        variables = lich.env("listen-card")
        windows = sys.platform == "win32"
        shell, assign = ("cmd.exe", "set") if windows else ("shell", "export")
        environment.out(f"lich stand-in listening; in the {shell} you test from, run:")
        for key, value in variables.items():
            environment.out(f"{assign} {key}={value}")
        if windows:
            powershell = "; ".join(f'$env:{key}="{value}"' for key, value in variables.items())
            environment.out(f"(PowerShell: {powershell})")
        environment.out("(Ctrl-C to stop)")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return ExitCode.OK
