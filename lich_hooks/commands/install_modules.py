"""install / uninstall for the module harnesses, opencode and omp.

The decisions are in module_harnesses.py; this is the I/O around them: write
or remove the module file and print what happened. (doctor's checks are in
doctor/registrations.py, demo's payloads in demo.py.)

What `install` promises here: the module file is ours by its first line (the
marker); a missing file is written, an older version of ours is replaced (a
re-run of the same version writes nothing), and anything else at that path —
someone's own file, a symlink, a folder — is refused and left untouched.
`uninstall` removes only a file of ours and never the folders around it.
"""

from __future__ import annotations

import os

from lich_hooks import module_harnesses
from lich_hooks.commands.exit_codes import ExitCode
from lich_hooks.commands.style import paint
from lich_hooks.module_harnesses import MODULES, ModuleHarness, read
from lich_hooks.settings import files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lich_hooks.commands.environment import Environment


def install(
    environment: Environment,
    harness_key: str,
    scope: str,
    dry_run: bool,
    uninstall: bool,
    executable: str | None,
) -> ExitCode:
    """OK: done (or nothing to do); PROBLEM_FOUND: refused or failed (said on stderr)."""
    out, environ, project, color = (
        environment.out,
        environment.environ,
        environment.cwd,
        environment.colour,
    )
    harness = MODULES[harness_key]
    path = harness.path(scope, environ, project)
    found = read(path)
    label = f"{harness.title} ({scope} scope)"
    if uninstall:
        plan = module_harnesses.plan_uninstall(harness, scope, path, found)
    else:
        assert executable is not None
        plan = module_harnesses.plan_install(harness, scope, path, found, executable)
    verb = "uninstall" if uninstall else "install"
    if plan.action == module_harnesses.REFUSE:
        _error(environment, f"lich-hook: {verb} refused: {plan.why}; nothing was changed")
        return ExitCode.PROBLEM_FOUND
    if plan.action == module_harnesses.NOTHING:
        if uninstall:
            out(f"No lich-hook module for {label} at {path}: nothing to remove.")
            if plan.why:
                out(f"  ({plan.why})")
        else:
            out(f"Already installed for {label} at {path}: nothing written.")
        return ExitCode.OK
    if dry_run:
        out(plan.diff().rstrip("\n"))
        out(paint(f"(dry run: {path} was not changed)", "dim", color))
        return ExitCode.OK
    try:
        if plan.action == module_harnesses.REMOVE:
            os.unlink(path)
        else:
            assert plan.new_text is not None
            # An older module of ours keeps its owner and mode; a new one gets the umask's.
            files.replace(path, plan.new_text.encode("utf-8"))
    except OSError as error:
        _error(environment, f"lich-hook: {verb} failed: {path}: {error.strerror or error}")
        return ExitCode.PROBLEM_FOUND
    if uninstall:
        out(paint(f"Removed the lich-hook module for {label}: {path}", "green", color))
        return ExitCode.OK
    action = "Updated" if plan.had_ours else "Installed"
    out(paint(f"{action} the lich-hook module for {label}: {path}", "green", color))
    out(f"  runs: {executable} {module_harnesses.EVENT} {harness.key}")
    for line in next_steps(harness):
        out(line)
    _note_other_scope(harness, scope, environ, project, out, color)
    return ExitCode.OK


def next_steps(harness: ModuleHarness) -> list[str]:
    if harness.key == "opencode":
        return [
            "Next: start opencode in a lich card; a new session reports at once, a continued "
            "one (-c, -s, the session list) with its next message."
        ]
    return ["Next: start omp in a lich card; a new, resumed or forked session reports at once."]


def _note_other_scope(
    harness: ModuleHarness,
    scope: str,
    environ: Mapping[str, str],
    project: str,
    out: Callable[[str], None],
    color: bool,
) -> None:
    """Both scopes loaded means every report is sent twice: say so."""
    for other in module_harnesses.SCOPES:
        if other == scope:
            continue
        path = harness.path(other, environ, project)
        if os.path.realpath(path) == os.path.realpath(harness.path(scope, environ, project)):
            continue
        found = read(path)
        if found.text is not None and module_harnesses.is_ours(found.text):
            out(
                paint(
                    f"Note: {harness.title} also loads lich-hook's module from {path}; every "
                    f"report would be sent twice. Keep one (lich-hook uninstall {harness.key} "
                    f"--scope {other}).",
                    "yellow",
                    color,
                )
            )


def _error(environment: Environment, text: str) -> None:
    """One line on stderr, so `install --dry-run > change.diff` cannot swallow it."""
    environment.err(paint(text, "red", environment.stderr_colour))
