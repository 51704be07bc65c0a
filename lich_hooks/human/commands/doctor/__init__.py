"""`lich-hook doctor [--json]`: what a user checks when "nothing reports" (docs/troubleshooting.md);
exit 0 only when reporting has all it needs (warnings do not count). The token is scrubbed from
every check before encoding (JSON or repr() would escape it)."""

from __future__ import annotations

from collections.abc import Mapping

from lich_hooks import __version__
from lich_hooks.base.runlog import RunLog
from lich_hooks.human.commands.doctor import codex_daemon, crush_server, versions
from lich_hooks.human.commands.doctor.check import FAIL, INFO, OK, SKIP, WARN, Check
from lich_hooks.human.commands.doctor.hooks import check_registrations
from lich_hooks.human.commands.doctor.lich import check_bin, check_listener, check_variables
from lich_hooks.human.commands.doctor.machine import (
    check_debug,
    check_install,
    check_interactive,
    check_state_dir,
)
from lich_hooks.human.commands.environment import Environment, ExitCode, paint
from lich_hooks.human.settings import ours
from lich_hooks.human.settings.errors import Refused


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
        check_bin(environ),
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
            if line not in row["summary"]:  # a row's first reason is in its summary: said once
                out(f"         {line}")
        if row.get("fix") and row["status"] in (FAIL, WARN):
            out(f"         -> {row['fix']}")
    failed = sum(1 for c in checks if c.status == FAIL)
    if ok:
        out(paint("Everything reporting needs is in place.", "green", color))
    else:
        out(paint(f"{failed} problem(s): see the -> lines above.", "red", color))
    return ExitCode.OK if ok else ExitCode.PROBLEM_FOUND
