"""`lich-hook install|uninstall <harness>` (docs/install.md): the one flow around a registry entry's
plan (refuse, nothing to do, the diff, or write and say what now runs and what next)."""

from __future__ import annotations

from lich_hooks.human.commands.environment import Environment, ExitCode, paint
from lich_hooks.human.settings import discovery, kinds, ours
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.kinds import Scope
from lich_hooks.human.settings.registry import HARNESSES


def run(
    environment: Environment,
    harness_key: str,
    scope: Scope = "user",
    dry_run: bool = False,
    uninstall: bool = False,
    force: bool = False,
    verbose: bool = False,
) -> ExitCode:
    """OK: done or nothing to do; PROBLEM_FOUND: refused or failed (on stderr). `verbose`:
    also the commands the file now runs (three of ~600 characters for Claude Code)."""
    out, color = environment.out, environment.colour
    verb = "uninstall" if uninstall else "install"
    harness = HARNESSES[harness_key]
    try:
        executable = None if uninstall else ours.this_executable()
        plan = harness.plan(scope, executable, environment.environ, environment.cwd)
    except Refused as error:
        return _error(environment, f"lich-hook: {verb} refused: {error}")
    label = f"{harness.title} ({scope} scope)"
    if plan.action == kinds.NOTHING:
        if uninstall:
            out(f"No {harness.ours_noun} for {label} in {plan.path}: nothing to remove.")
            if plan.why:
                out(f"  ({plan.why})")
        else:
            out(f"Already installed for {label} in {plan.path}: nothing written.")
        return ExitCode.OK
    if dry_run:
        out(_colour_diff(plan.diff(), color).rstrip("\n"))
        out(paint(f"(dry run: {plan.path} was not changed)", "dim", color))
        return ExitCode.OK
    try:
        backup = harness.apply(plan, force)
    except Refused as error:
        return _error(environment, f"lich-hook: {verb} refused: {error}")
    except OSError as error:
        why = f"cannot write {plan.path}: {error.strerror or error}"
        return _error(environment, f"lich-hook: {verb} failed: {why}")
    if uninstall:
        out(paint(f"Removed {harness.ours_noun} from {label}: {plan.path}", "green", color))
    else:
        action = "Updated" if plan.had_ours else "Installed"
        out(paint(f"{action} {harness.ours_noun} for {label}: {plan.path}", "green", color))
        assert executable is not None
        for command in harness.runs(plan, executable) if verbose else ():
            out(f"  runs: {command}")
    if backup:
        out(f"  backup of the previous file: {backup}")
    if not uninstall:
        assert executable is not None
        for line in harness.next_steps(scope, ours.quote(executable)):
            out(line)
        for note in discovery.also_registered(harness, plan, environment.environ, environment.cwd):
            out(paint(note, "yellow", color))
    return ExitCode.OK


def _error(environment: Environment, text: str) -> ExitCode:
    """One line on stderr, so `install --dry-run > change.diff` cannot swallow it."""
    environment.err(paint(text, "red", environment.stderr_colour))
    return ExitCode.PROBLEM_FOUND


DIFF_COLOURS = (("+++", "bold"), ("---", "bold"), ("+", "green"), ("-", "red"), ("@@", "cyan"))


def _colour_diff(text: str, on: bool) -> str:
    if not on:
        return text
    lines = []
    for line in text.splitlines():
        colour = next((c for start, c in DIFF_COLOURS if line.startswith(start)), None)
        lines.append(paint(line, colour, on) if colour else line)
    return "\n".join(lines) + "\n"
