"""The releases each entry was verified on, and the one installed (docs/troubleshooting.md, the
version row). Only Claude Code's native binary is run: Codex's `--version` writes into CODEX_HOME,
opencode's and omp's take a second."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath

from lich_hooks.human.settings import files

VERSION_TIMEOUT = 2.0
JSON_LIMIT = 64 * 1024  # a package.json
MAX_PARENTS = 6  # from the binary up to its package's folder
_NUMBER = re.compile(r"(\d+(?:\.\d+)+)")
_NATIVE = re.compile(r"[/\\]claude[/\\]versions[/\\](\d+(?:\.\d+)+)$")


@dataclass(eq=False)
class Verified:
    """A harness's command, its npm packages, and the range of releases verified."""

    command: str
    packages: tuple[str, ...]  # npm names, platform packages included
    oldest: str
    newest: str
    runs_version: bool = False  # `<command> --version` is fast and writes nothing

    def contains(self, version: str) -> bool:
        return version_key(self.oldest) <= version_key(version) <= version_key(self.newest)

    @property
    def range(self) -> str:
        return self.oldest if self.oldest == self.newest else f"{self.oldest} – {self.newest}"


def version_key(version: str) -> tuple[int, ...]:
    """`0.171.0-linux-x64` → (0, 171, 0): numbers only, a platform or pre-release tag ignored."""
    found = _NUMBER.search(version)
    return tuple(int(part) for part in found.group(1).split(".")) if found else ()


@dataclass(eq=False)
class Installed:
    """What doctor found: the command's path and the version (None: could not be read)."""

    path: str
    version: str | None


def installed(harness: Verified, environ: Mapping[str, str]) -> Installed | None:
    """The harness's command on `environ`'s PATH and its version; None when not on PATH."""
    found = shutil.which(harness.command, path=environ.get("PATH", os.defpath))
    if found is None:
        return None
    real = os.path.realpath(found)
    native = _NATIVE.search(real)
    version = native.group(1) if native else _package_version(real, harness.packages)
    if version is None and harness.runs_version and not _is_script(real):
        version = _run_version(real, environ)
    return Installed(found, version)


def _package_version(path: str, packages: tuple[str, ...]) -> str | None:
    """The version in the nearest package.json above `path` that is one of `packages`."""
    for folder in PurePath(path).parents[:MAX_PARENTS]:
        candidate = os.path.join(folder, "package.json")
        # bounded, never through a symlink or from a non-regular file
        manifest = None if os.path.islink(candidate) else files.read_json(candidate, JSON_LIMIT)
        if isinstance(manifest, dict):
            name, version = manifest.get("name"), manifest.get("version")
            if isinstance(name, str) and any(
                n == name or name.startswith(n + "-") for n in packages
            ):
                if isinstance(version, str) and version_key(version):
                    return ".".join(map(str, version_key(version)))
                return None
    return None


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return True


def _run_version(path: str, environ: Mapping[str, str]) -> str | None:
    try:
        proc = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            check=False,
            env=dict(environ),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = _NUMBER.search(proc.stdout) if proc.returncode == 0 else None
    return found.group(1) if found else None
