"""`lich-hook doctor [--json]`: what a user checks when "nothing reports" (docs/troubleshooting.md).

Each check gives a one-line verdict and, when it fails, what to do. The exit
code is 0 only when everything reporting needs is in place: the lich
variables, a listener that takes our token, and at least one harness
registration that the harness will really run (installed, enabled, trusted:
settings/discovery.py) and that runs an existing lich-hook. Warnings (a
duplicate registration, a state directory we cannot write) do not change it.
Each check is a function in one of this package's modules (lich.py: lich's
variables, listener, LICH_BIN; registrations.py: every settings, plugin and
module file; codex_daemon.py, crush_server.py: a shared Codex daemon or Crush
server; versions.py: each harness's release against the range verified;
machine.py: this installation and machine),
built from check.py's vocabulary and importing nothing from here; `collect`
lists them, so a new one is one function and one line.

Nothing here prints the token: it is shown as its length, and every check is
scrubbed of it (as runlog.py scrubs the log) before it is encoded, in case
`lich version` or a path echoes it: scrubbing the encoded text would miss a
token that JSON or repr() escapes.
"""

from __future__ import annotations

from lich_hooks import __version__
from lich_hooks.base.errors import Refused
from lich_hooks.base.runlog import RunLog
from lich_hooks.human.commands.doctor import codex_daemon, crush_server, versions
from lich_hooks.human.commands.doctor.check import FAIL, INFO, OK, SKIP, WARN, Check
from lich_hooks.human.commands.doctor.lich import check_bin, check_listener, check_variables
from lich_hooks.human.commands.doctor.machine import (
    check_debug,
    check_install,
    check_interactive,
    check_state_dir,
)
from lich_hooks.human.commands.doctor.registrations import check_registrations
from lich_hooks.human.commands.exit_codes import ExitCode
from lich_hooks.human.commands.style import paint
from lich_hooks.human.settings import ours

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.human.commands.environment import Environment


def collect(environ: Mapping[str, str], project: str) -> list[Check]:
    """Every check, in the order shown. A new check is one function and one line here."""
    try:
        executable: str | None = ours.this_executable()
    except Refused:
        executable = None
    return [
        check_install(executable),
        *check_variables(environ),
        *check_listener(environ),
        *check_bin(environ),
        *check_registrations(environ, project, executable),
        *codex_daemon.check(environ),
        *crush_server.check(environ),
        *versions.check(environ),
        check_state_dir(environ),
        check_interactive(environ),
        check_debug(environ),
    ]


_MARKS = {
    OK: ("ok", "green"),
    WARN: ("warn", "yellow"),
    FAIL: ("FAIL", "red"),
    INFO: ("info", "dim"),
    SKIP: ("skip", "dim"),
}


def run(environment: Environment, as_json: bool = False) -> ExitCode:
    """OK when everything reporting needs is in place, else PROBLEM_FOUND."""
    out, env, color = environment.out, environment.environ, environment.colour
    checks = collect(env, environment.cwd)
    ok = all(check.status != FAIL for check in checks)
    rows = RunLog(env).scrub([c.as_dict() for c in checks])
    assert isinstance(rows, list)
    if as_json:
        import json

        report = {"ok": ok, "version": __version__, "checks": rows}
        out(json.dumps(report, indent=2, ensure_ascii=False))
        return ExitCode.OK if ok else ExitCode.PROBLEM_FOUND
    for row in rows:
        mark, colour = _MARKS[row["status"]]
        out(f"{paint(f'[{mark:>4}]', colour, color)} {row['name']}: {row['summary']}")
        commands = row.get("details", {}).get("commands")
        for line in commands if isinstance(commands, list) else []:
            out(f"         {line}")
        if row.get("fix") and row["status"] in (FAIL, WARN):
            out(f"         -> {row['fix']}")
    failed = sum(1 for c in checks if c.status == FAIL)
    if ok:
        out(paint("Everything reporting needs is in place.", "green", color))
    else:
        out(paint(f"{failed} problem(s): see the -> lines above.", "red", color))
    return ExitCode.OK if ok else ExitCode.PROBLEM_FOUND
