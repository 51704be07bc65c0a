"""doctor's checks of the opencode and omp module files (docs/install.md)."""

from __future__ import annotations

import os

from lich_hooks import module_harnesses
from lich_hooks.module_harnesses import MODULES, read

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.commands.doctor import Check


def doctor_checks(environ: Mapping[str, str], project: str, executable: str | None) -> list[Check]:
    """One check per module file in place (ours or not); nothing when there is none.

    A module of ours counts as a working registration when the lich-hook it
    names exists (docs/troubleshooting.md): doctor's overall verdict uses that.
    """
    from lich_hooks.commands.doctor import FAIL, INFO, OK, WARN, Check, same_file

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
            if executable is not None and same_file(target, executable) and current:
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
                if executable is None or not same_file(target, executable)
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
