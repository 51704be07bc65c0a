"""doctor's harness versions against the range verified: a harness not on PATH is left out, one
outside the range is a warning (it was just not run on that version)."""

from __future__ import annotations

from collections.abc import Mapping

from lich_hooks.human.commands.doctor.check import INFO, OK, WARN, Check
from lich_hooks.human.settings import verified
from lich_hooks.human.settings.registry import HARNESSES

FIX = (
    "it may work; if something does not report, update lich-hooks or the harness "
    "(docs/harnesses.md, Supported versions)"
)


def check(environ: Mapping[str, str]) -> list[Check]:
    checks: list[Check] = []
    for entry in HARNESSES.values():
        harness = entry.verified
        found = None if harness is None else verified.installed(harness, environ)
        if harness is None or found is None:
            continue
        name = f"{entry.title} version"
        said = f"verified: {harness.range}"
        if found.version is None:
            summary = f"{found.path}: version not readable ({said})"
            checks.append(Check(name, INFO, summary, path=found.path))
            continue
        if harness.contains(found.version):
            row = Check(name, OK, f"{found.version} ({said})")
        else:
            older = verified.version_key(found.version) < verified.version_key(harness.oldest)
            side = "older" if older else "newer"
            summary = f"{found.version} is {side} than any version lich-hooks was verified on"
            row = Check(name, WARN, f"{summary} ({said})", FIX)
        span = [harness.oldest, harness.newest]
        row.details = {"path": found.path, "version": found.version, "verified": span}
        checks.append(row)
    return checks
