"""doctor's rows about each file holding our entries and whether its harness runs them; doctor fails
unless one harness runs a working lich-hook (docs/troubleshooting.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping

from lich_hooks.base.harnesses import REGISTRATIONS
from lich_hooks.base.safefile import same_file
from lich_hooks.human.commands.doctor.check import FAIL, INFO, OK, WARN, Check, script_head, worst
from lich_hooks.human.settings import commandline, discovery, kinds, modules, ours, registrations
from lich_hooks.human.settings.jsontext import walk
from lich_hooks.human.settings.module_file import ModuleHarness
from lich_hooks.human.settings.registry import HARNESSES, MODULES, SETTINGS, discover


def check_registrations(
    environ: Mapping[str, str], project: str, executable: str | None
) -> list[Check]:
    """Every registration row, then a failure when none of them is one that works."""
    checks = (
        settings_rows(environ, project, executable)
        + gone_plugin_rows(environ, project)
        + module_rows(environ, project, executable)
    )
    # One cause, one FAIL: a registration that fails already says why and what fixes it.
    if not any(c.counts_as_registration for c in checks):
        first, *rest = HARNESSES
        plugins = "; ".join(f"{h.title}: {h.plugin_add}" for h in SETTINGS.values() if h.plugin_add)
        fix = f"add the plugin ({plugins}), or run `lich-hook install {first}` (or "
        fix += f"{', '.join(rest)}): docs/install.md"
        checks.append(Check("registrations", FAIL, "no harness runs a working lich-hook", fix))
    return checks


def judge_command(
    command: str,
    executable: str | None,
    environ: Mapping[str, str],
    found: discovery.Found | None = None,
) -> Check:
    """Does this registered command run an existing lich-hook, and is it this one? `found`: its
    file; a failing plugin command is fixed on the plugin, never by `install`."""
    registered = commandline.parse(command)
    argv = registered.argv() if registered is not None else ours.split(command)
    if registered is not None and registered.launcher and found is not None and found.root:
        return judge_launcher(argv, environ, found)
    program, what = argv[0], " ".join(argv[1:])
    if os.path.isabs(program):
        target: str | None = program
        missing = f"runs {program}, which does not exist"
    else:
        target = shutil.which(program, path=environ.get("PATH", os.defpath))
        missing = f"runs `{program}` from PATH, and there is no {program} on PATH"
    if target is None or not os.path.isfile(target):
        return Check(what, FAIL, missing, _missing_fix(found, executable, environ))
    interpreter = _interpreter_gone(target)
    if interpreter is not None:
        why = f"runs {target}, which cannot start: its Python {interpreter} is gone (upgraded "
        why += "or removed), so it reports nothing"
        return Check(what, FAIL, why, registrations.reinstall(target))
    if executable is not None and same_file(target, executable):
        return Check(what, OK, f"runs this installation ({target})")
    fix = "lich-hook install <harness> switches it to this one"
    return Check(what, WARN, f"runs another installation: {target}", fix)


def _interpreter_gone(program: str) -> str | None:
    """The `#!` interpreter of a script that names one which is not there, else None."""
    head = script_head(program, 512)
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].split()
    interpreter = os.fsdecode(words[0]) if words else ""
    return interpreter if interpreter and not os.path.exists(interpreter) else None


def _missing_fix(
    found: discovery.Found | None, executable: str | None, environ: Mapping[str, str]
) -> str:
    """In a plugin only the plugin or PATH ends the failure (`install`'s new entries would leave
    the plugin's failing beside them)."""
    if found is None or not found.plugin:
        return "register this installation by absolute path: lich-hook install <harness>"
    remove = _plugin_remove(found)
    on_path = shutil.which("lich-hook", path=environ.get("PATH", os.defpath))
    if executable is not None and on_path is None:  # installed, but not where the plugin looks
        return (
            f"put lich-hook on PATH: `pipx ensurepath` (uv: `uv tool update-shell`), then open a "
            f"new terminal; or remove this old plugin copy: `{remove}`"
        )
    return (
        f"this plugin copy is an old one that needs lich-hook on PATH: remove it "
        f"(`{remove}`) and add the plugin again from a current clone, or "
        f"`lich-hook install <harness>` after removing it"
    )


def _plugin_remove(found: discovery.Found) -> str:
    """The harness's own command that removes this plugin (its registry entry's)."""
    plugin_id = (found.owner or "lich-hooks@lich-hooks").split(",", 1)[0]
    scope = f" --scope {found.scope}" if found.scope not in (None, "user") else ""
    template = found.harness.plugin_remove or "remove the plugin {id}"
    return template.format(id=plugin_id, scope=scope)


LAUNCHER_TIMEOUT = 10.0  # seconds for each of the launcher's own checks (`--python`, `--version`)


def judge_launcher(argv: list[str], environ: Mapping[str, str], found: discovery.Found) -> Check:
    """A plugin hook that runs the plugin's own copy: is the copy whole, is there a Python?"""
    assert found.root is not None
    variable = REGISTRATIONS[found.harness.key].plugin_root or "CLAUDE_PLUGIN_ROOT"
    launcher = argv[0].replace("${" + variable + "}", found.root)
    what = " ".join(argv[1:])
    boot = os.path.join(os.path.dirname(launcher), "boot.py")
    again = f"install the plugin again: `{_plugin_remove(found)}`, then add it again"
    if not os.path.isfile(launcher) or not os.path.isfile(boot):
        why = f"the plugin's copy in {found.root} is incomplete (no {launcher})"
        return Check(what, FAIL, why, again)
    ran = _run_bounded(["sh", launcher, "--python"], environ)  # the Python the launcher picks
    python = "" if ran is None else ran.stdout.decode("utf-8", "replace").strip()
    if not python:
        why = "finds no Python 3.10 or newer on PATH (python3, python, python3.1x), so it "
        why += "reports nothing (the hook stays silent)"
        return Check(what, FAIL, why, "install Python 3.10 or newer, then start a new session")
    ran = _run_bounded([python, "-E", "-s", "-S", boot, "--version"], environ)  # 0: it imports
    if ran is None or ran.returncode != 0:
        why = f"the plugin's copy in {found.root} is incomplete (its package does not load), "
        why += "so it reports nothing (inside lich SessionStart says so)"
        return Check(what, FAIL, why, again)
    # beside an `install` entry, the first to claim the event acts (hook/claim.py): one report
    return Check(what, OK, f"runs the plugin's own copy with {python}")


def _run_bounded(
    argv: list[str], environ: Mapping[str, str]
) -> subprocess.CompletedProcess[bytes] | None:
    """Run a launcher step as the hook would, bounded; None when it cannot start or hangs."""
    try:
        return subprocess.run(
            argv,
            env=dict(environ),
            capture_output=True,
            timeout=LAUNCHER_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def windows_verdicts(
    found: discovery.Found, executable: str | None, environ: Mapping[str, str]
) -> list[Check]:
    """A row per `command_windows` Codex's shell would not run, or whose program is missing."""
    shell = registrations.codex_windows_shell(environ.get("PATH"))
    fix = f"lich-hook install {found.harness.key} writes it for this machine's shell"
    rows = []
    for handler in walk(found.document):
        if not (isinstance(handler, dict) and ours.is_ours(handler)):
            continue
        command = handler.get("command_windows")
        written = commandline.parse(command)
        what = " ".join((ours.command_argv(handler["command"]) or [])[1:])
        if written is not None and written.guard == commandline.OLD_POWERSHELL:
            written.guard = commandline.POWERSHELL  # PowerShell's: for cmd.exe, as wrong as ever
            if shell == commandline.POWERSHELL:
                why = "is an earlier release's PowerShell form, which drops the hook's stdout "
                why += "with its stderr: it reports, but the line a refusal shows never reaches "
                rows.append(Check(what, WARN, f"its command_windows {why}Codex (fix: {fix})", fix))
        if written is None or written.guard != shell:
            why = "is missing" if command is None else f"is not one {shell} runs"
            if written is not None:
                why = f"is written for {written.guard}, and Codex runs it in {shell} here"
            why += ", so nothing reports"
            rows.append(Check(what, FAIL, f"its command_windows {why} (fix: {fix})", fix))
            continue
        assert isinstance(command, str)
        verdict = judge_command(command, executable, environ, found)
        if verdict.status != OK:
            rows.append(Check(what, verdict.status, f"its command_windows {verdict.summary}", fix))
    return rows


def _registration_check(
    found: discovery.Found, executable: str | None, environ: Mapping[str, str]
) -> Check:
    """One file's verdict; the summary carries the reason (a script reading --json needs it)."""
    harness = found.harness
    verdicts = [judge_command(command, executable, environ, found) for command in found.commands]
    if sys.platform == "win32" and harness.command_windows and not found.plugin:
        verdicts += windows_verdicts(found, executable, environ)
    blocked = [blocker.summary for blocker in found.blockers]
    lines = [f"{v.name}: {v.summary}" for v in verdicts] + list(found.notes) + blocked
    fixes = [b.fix for b in found.blockers] + [v.fix for v in verdicts if v.fix]
    fix = fixes[0].replace("<harness>", harness.key) if fixes else None
    count = len(found.commands)
    owner = f" ({found.owner})" if found.owner else ""
    summary = f"{found.path}{owner}: {count} lich-hook entr{'y' if count == 1 else 'ies'}"
    status = worst([v.status for v in verdicts] + [FAIL] * len(blocked))
    reasons = blocked + [f"{v.name}: {v.summary}" for v in verdicts if v.status == status]
    if status in (FAIL, WARN) and reasons:
        summary += f"; {reasons[0]}"
        if len(reasons) > 1:
            summary += f" (and {len(reasons) - 1} more)"
    name = f"{harness.title} {found.label}"
    return Check(name, status, summary, fix, counts_as_registration=True, commands=lines)


def gone_plugin_rows(environ: Mapping[str, str], project: str) -> list[Check]:
    """Our Claude Code plugin installed from a folder that is gone: it runs none of its hooks."""
    from lich_hooks.human.settings import claude_plugins

    harness = SETTINGS["claude"]
    places = [path for _, path in harness.places(environ, project)]
    rows = []
    for plugin in claude_plugins.installed(environ, project, places):
        if plugin.name != "lich-hooks" or plugin.present:
            continue
        why = f"{plugin.describe()}: Claude Code reads it from {plugin.root}, which is gone "
        why += "(a moved or deleted clone), so it runs none of its hooks"
        fix = f"`claude plugin marketplace remove {plugin.marketplace}` (it uninstalls the "
        fix += "plugin too), then add it again from a clone: docs/install.md"
        rows.append(Check(f"{harness.title} plugin", FAIL, why, fix, counts_as_registration=True))
    return rows


def settings_rows(environ: Mapping[str, str], project: str, executable: str | None) -> list[Check]:
    """A row per settings or plugin file with our entries; one the harness will not run is a
    failure, or a warning beside a working registration of the same harness."""
    checks: list[Check] = []
    rows: list[tuple[discovery.Found, Check]] = []
    for found in discover(environ, project, ask=True):
        title, path = found.harness.title, found.path
        name = f"{title} {found.label}"
        if found.error is not None:
            if not found.plugin:
                fix = f"{title} may ignore this whole file: fix it"
                checks.append(Check(name, FAIL, f"{path} does not parse: {found.error}", fix))
            continue
        off = found.harness.off_switch
        if off is not None and isinstance(found.document, dict) and found.document.get(off):
            why = f"{path} sets {off}: {title} runs no hook at all"
            checks.append(Check(name, FAIL, why, f'remove "{off}" from {path}'))
        if found.commands:
            check = _registration_check(found, executable, environ)
            rows.append((found, check))
            checks.append(check)
    working = {found.harness.key for found, check in rows if check.status != FAIL}
    per_harness: dict[str, dict[str, str]] = {}  # harness -> source -> a path
    for found, check in rows:
        if found.blockers and found.harness.key in working:
            check.status = WARN  # another registration of this harness works
        elif check.status == FAIL and not found.plugin and found.harness.key in working:
            # the plugin reports (its claim silenced these): taking these out is the fix
            scope = " --scope project" if found.label.startswith("project") else ""
            check.status = WARN
            check.summary += f"; {found.harness.title}'s plugin reports instead"
            check.fix = (
                f"`lich-hook uninstall {found.harness.key}{scope}` takes these entries out "
                f"(the plugin goes on reporting); or {check.fix}"
            )
        if found.runs and not found.yields_to_install:
            # Copies of one plugin are one registration; the project may be the home.
            source = found.owner or os.path.realpath(found.path)
            per_harness.setdefault(found.harness.key, {}).setdefault(source, found.path)
    for key, sources in per_harness.items():
        paths, count = list(sources.values()), len(sources)
        if count > 1:
            why = f"registered in {count} places: each event runs lich-hook {count} times"
            fix = f"keep one: `lich-hook uninstall {key} --scope …` or remove the plugin"
            checks.append(Check(f"{HARNESSES[key].title} duplicates", WARN, why, fix, files=paths))
    return checks


def module_rows(environ: Mapping[str, str], project: str, executable: str | None) -> list[Check]:
    """A row per module file in place; ours counts as a registration when its lich-hook exists."""
    checks: list[Check] = []
    for harness in MODULES.values():
        seen: set[str] = set()
        ours_at: list[str] = []
        for scope in kinds.SCOPES:
            path = harness.path(scope, environ, project)
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            found = modules.read(path)
            name = f"{harness.title} {scope} module"
            if found.kind == "missing":
                continue
            if found.text is None or not modules.is_ours(found.text):
                why = f"{path} is not lich-hook's ({found.why or 'no marker line'})"
                checks.append(Check(name, INFO, f"{why}: it is left alone"))
                continue
            ours_at.append(path)
            checks.append(_module_row(name, path, found.text, harness, scope, executable))
        if len(ours_at) > 1:
            count = len(ours_at)
            why = f"the module is in {count} places: each session reports {count} times"
            fix = f"keep one: `lich-hook uninstall {harness.key} --scope …`"
            checks.append(Check(f"{harness.title} duplicates", WARN, why, fix, files=ours_at))
    return checks


def _module_row(
    name: str, path: str, text: str, harness: ModuleHarness, scope: str, executable: str | None
) -> Check:
    """ok: runs this installation; warn: another, or an older module; fail: no such lich-hook."""
    target = modules.executable_of(text)
    fix: str | None = f"lich-hook install {harness.key} --scope {scope}"
    if target is None or not os.path.isfile(target):
        status, summary = FAIL, f"{path} runs {target or 'no lich-hook'}, which does not exist"
    elif executable is None or not same_file(target, executable):
        status, summary = WARN, f"{path}: runs another installation: {target}"
        fix = f"{fix} replaces it"
    elif text != modules.render(harness.template, executable):
        status, summary = WARN, f"{path}: an older version of the module (it runs {target})"
        fix = f"{fix} replaces it"
    else:
        status, summary, fix = OK, f"{path} runs this installation ({target})", None
    registered = status != WARN  # ok and fail count as registrations
    return Check(
        name, status, summary, fix, counts_as_registration=registered, module=path, runs=target
    )
