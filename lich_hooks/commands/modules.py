"""install / uninstall / doctor / demo for the module harnesses, opencode and omp.

The decisions are in module_harnesses.py; this is the I/O around them: read
what is at the module's path, write or remove it, print what happened, check
it for doctor, and give demo the payloads each module sends.

What `install` promises here: the module file is ours by its first line (the
marker); a missing file is written, an older version of ours is replaced (a
re-run of the same version writes nothing), and anything else at that path —
someone's own file, a symlink, a folder — is refused and left untouched.
`uninstall` removes only a file of ours and never the folders around it.
"""

from __future__ import annotations

import os
import stat
import sys

from lich_hooks import module_harnesses, state
from lich_hooks.commands.style import paint, wanted
from lich_hooks.module_harnesses import MODULES, Found, ModuleHarness

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lich_hooks.commands.demo import Scenario
    from lich_hooks.commands.doctor import Check

READ_LIMIT = 1 << 20


def read(path: str) -> Found:
    """What is at `path`, without following a symlink or blocking on a FIFO."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return Found("missing")
    except OSError as error:
        return Found("other", why=f"cannot look at {path}: {error.strerror or error}")
    if stat.S_ISLNK(info.st_mode):
        return Found("other", why=f"{path} is a symlink: left as it is")
    if not stat.S_ISREG(info.st_mode):
        return Found("other", why=f"{path} is not a regular file: left as it is")
    try:
        with open(path, "rb") as handle:
            data = handle.read(READ_LIMIT)
    except OSError as error:
        return Found("other", why=f"cannot read {path}: {error.strerror or error}")
    try:
        return Found("file", data.decode("utf-8"))
    except UnicodeDecodeError:
        return Found("other", why=f"{path} is not UTF-8 text, so not ours: left as it is")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def install(
    harness_key: str,
    scope: str,
    dry_run: bool,
    uninstall: bool,
    out: Callable[[str], None],
    environ: Mapping[str, str],
    project: str,
    executable: str | None,
    color: bool = False,
) -> int:
    """Exit code: 0 done (or nothing to do), 1 refused or failed (said on stderr)."""
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
        _error(f"lich-hook: {verb} refused: {plan.why}; nothing was changed")
        return 1
    if plan.action == module_harnesses.NOTHING:
        if uninstall:
            out(f"No lich-hook module for {label} at {path}: nothing to remove.")
            if plan.why:
                out(f"  ({plan.why})")
        else:
            out(f"Already installed for {label} at {path}: nothing written.")
        return 0
    if dry_run:
        out(plan.diff().rstrip("\n"))
        out(paint(f"(dry run: {path} was not changed)", "dim", color))
        return 0
    try:
        if plan.action == module_harnesses.REMOVE:
            os.unlink(path)
        else:
            assert plan.new_text is not None
            mode = (0o666 & ~_umask()) if found.kind == "missing" else None
            if mode is None:
                mode = os.stat(path).st_mode & 0o7777
            state.write_atomic(path, plan.new_text.encode("utf-8"), mode, private_dir=False)
    except OSError as error:
        _error(f"lich-hook: {verb} failed: {path}: {error.strerror or error}")
        return 1
    if uninstall:
        out(paint(f"Removed the lich-hook module for {label}: {path}", "green", color))
        return 0
    action = "Updated" if plan.had_ours else "Installed"
    out(paint(f"{action} the lich-hook module for {label}: {path}", "green", color))
    out(f"  runs: {executable} {module_harnesses.EVENT} {harness.key}")
    for line in next_steps(harness):
        out(line)
    _note_other_scope(harness, scope, environ, project, out, color)
    return 0


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


def _error(text: str) -> None:
    """One line on stderr, so `install --dry-run > change.diff` cannot swallow it."""
    print(paint(text, "red", wanted(sys.stderr)), file=sys.stderr)


# --- doctor ------------------------------------------------------------------------------


def doctor_checks(environ: Mapping[str, str], project: str, executable: str | None) -> list[Check]:
    """One check per module file in place (ours or not); nothing when there is none.

    A module of ours counts as a working registration when the lich-hook it
    names exists (docs/troubleshooting.md): doctor's overall verdict uses that.
    """
    from lich_hooks.commands.doctor import FAIL, INFO, OK, WARN, Check

    checks: list[Check] = []
    for harness in MODULES.values():
        seen: set[str] = set()
        ours_at: list[str] = []
        for scope in module_harnesses.SCOPES:
            path = harness.path(scope, environ, project)
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            found = read(path)
            name = f"{harness.title} {scope} module"
            if found.kind == "missing":
                continue
            if found.text is None or not module_harnesses.is_ours(found.text):
                checks.append(
                    Check(
                        name,
                        INFO,
                        f"{path} is not lich-hook's ({found.why or 'no marker line'}): "
                        "it is left alone",
                    )
                )
                continue
            ours_at.append(path)
            target = module_harnesses.executable_of(found.text)
            current = executable is not None and found.text == module_harnesses.render(
                harness, executable
            )
            if target is None or not os.path.isfile(target):
                checks.append(
                    Check(
                        name,
                        FAIL,
                        f"{path} runs {target or 'no lich-hook'}, which does not exist",
                        f"lich-hook install {harness.key} --scope {scope}",
                        module=path,
                        runs=target,
                    )
                )
                continue
            if executable is not None and _same_file(target, executable) and current:
                checks.append(
                    Check(
                        name,
                        OK,
                        f"{path} runs this installation ({target})",
                        module=path,
                        runs=target,
                    )
                )
                continue
            why = (
                f"runs another installation: {target}"
                if executable is None or not _same_file(target, executable)
                else f"an older version of the module (it runs {target})"
            )
            checks.append(
                Check(
                    name,
                    WARN,
                    f"{path}: {why}",
                    f"lich-hook install {harness.key} --scope {scope} replaces it",
                    module=path,
                    runs=target,
                )
            )
        if len(ours_at) > 1:
            checks.append(
                Check(
                    f"{harness.title} duplicates",
                    WARN,
                    f"the module is in {len(ours_at)} places: each session reports "
                    f"{len(ours_at)} times",
                    f"keep one: `lich-hook uninstall {harness.key} --scope …`",
                    files=ours_at,
                )
            )
    return checks


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


# --- demo --------------------------------------------------------------------------------

OPENCODE_SESSION = "ses_dd3c012a1ffeI0xakA9Xos0n4j"
OMP_SESSION = "01a22c51-6760-7535-8f18-3c1900286b44"
OMP_NEW_SESSION = "01a22c51-d79d-7651-8660-5da4b3bc5f86"


def demo_scenarios() -> list[Scenario]:
    """What each module sends, run as the module runs it (no Node or Bun needed)."""
    from lich_hooks.commands.demo import Scenario

    return [
        Scenario(
            "opencode",
            module_harnesses.EVENT,
            "opencode",
            {"session_id": OPENCODE_SESSION},
            "session.created for a top-level session (a subagent's never reports)",
        ),
        Scenario(
            "opencode",
            module_harnesses.EVENT,
            "opencode",
            {"session_id": OPENCODE_SESSION},
            "`opencode run -c` (no creation event): its first message reports the session",
        ),
        Scenario(
            "omp",
            module_harnesses.EVENT,
            "omp",
            {"session_id": OMP_SESSION},
            "session_start (a task subagent's never reports)",
        ),
        Scenario(
            "omp",
            module_harnesses.EVENT,
            "omp",
            {"session_id": OMP_NEW_SESSION},
            "session_switch after /new (also /resume, /fork)",
        ),
    ]
