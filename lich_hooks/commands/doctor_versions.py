"""doctor's harness versions: each installed harness's version, against the range verified.

A harness not on PATH is left out (doctor is not a list of what you could install); one whose
version cannot be read from its files is shown without it. Outside the verified range is a
warning, never a failure: the hooks may well work, they were just not run on that version.
"""

from __future__ import annotations

from lich_hooks import harness_versions
from lich_hooks.harness_versions import VERIFIED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.commands.doctor import Check


def check(environ: Mapping[str, str]) -> list[Check]:
    from lich_hooks.commands.doctor import INFO, OK, WARN, Check

    checks: list[Check] = []
    for harness in VERIFIED.values():
        found = harness_versions.installed(harness, environ)
        if found is None:
            continue
        name = f"{harness.title} version"
        verified = f"verified: {harness.range}"
        if found.version is None:
            checks.append(
                Check(
                    name, INFO, f"{found.path}: version not readable ({verified})", path=found.path
                )
            )
        elif harness.contains(found.version):
            checks.append(
                Check(
                    name,
                    OK,
                    f"{found.version} ({verified})",
                    path=found.path,
                    version=found.version,
                    verified=[harness.oldest, harness.newest],
                )
            )
        else:
            side = (
                "older"
                if harness_versions.version_key(found.version)
                < harness_versions.version_key(harness.oldest)
                else "newer"
            )
            checks.append(
                Check(
                    name,
                    WARN,
                    f"{found.version} is {side} than any version lich-hooks was verified on "
                    f"({verified})",
                    "it may work; if something does not report, update lich-hooks or the "
                    "harness (docs/harnesses.md, Supported versions)",
                    path=found.path,
                    version=found.version,
                    verified=[harness.oldest, harness.newest],
                )
            )
    return checks
