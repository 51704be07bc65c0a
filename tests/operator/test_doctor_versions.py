"""doctor's harness versions: read from the install's own files, checked against each registry
entry's verified range."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from lich_hooks.human.settings import verified
from lich_hooks.human.settings.registry import HARNESSES
from tests.operator.conftest import Scratch

VERIFIED = {key: h.verified for key, h in HARNESSES.items() if h.verified is not None}


def _npm_install(prefix: Path, package: str, version: str, entry: str, command: str) -> Path:
    """What `npm install -g <package>` leaves: the package folder and a bin link into it."""
    folder = prefix / "lib" / "node_modules" / package
    (folder / Path(entry).parent).mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"name": package, "version": version}))
    script = folder / entry
    script.write_text("#!/usr/bin/env node\nprocess.exit(3)\n")  # never run by doctor
    script.chmod(0o755)
    (prefix / "bin").mkdir(parents=True, exist_ok=True)
    link = prefix / "bin" / command
    link.symlink_to(script)
    return link


def _rows(scratch: Scratch, env: dict[str, str]) -> dict[str, dict[str, object]]:
    ran = scratch.cli("doctor", "--json", env=env)
    assert ran.stderr == ""
    return {row["name"]: row for row in json.loads(ran.stdout)["checks"]}


def _with_path(scratch: Scratch, *folders: Path) -> dict[str, str]:
    return {**scratch.env, "PATH": os.pathsep.join([*map(str, folders), scratch.env["PATH"]])}


def test_versions_inside_the_verified_range_are_ok(scratch: Scratch) -> None:
    prefix = scratch.tmp / "npm"
    newest = VERIFIED["claude"].newest
    _npm_install(prefix, "@anthropic-ai/claude-code", newest, "cli.js", "claude")
    _npm_install(prefix, "@openai/codex", VERIFIED["codex"].oldest, "bin/codex.js", "codex")
    rows = _rows(scratch, _with_path(scratch, prefix / "bin"))
    claude = rows["Claude Code version"]
    assert claude["status"] == "ok"
    assert claude["summary"] == f"{newest} (verified: {VERIFIED['claude'].range})"
    assert rows["Codex version"]["status"] == "ok"
    assert "opencode version" not in rows  # not on PATH: not listed
    ran = scratch.cli("doctor", env=_with_path(scratch, prefix / "bin"))
    assert f"ok] Claude Code version: {newest} (verified: {VERIFIED['claude'].range})" in ran.stdout


@pytest.mark.parametrize(("version", "side"), [("2.1.30", "older"), ("2.2.0", "newer")])
def test_a_version_outside_the_range_warns_and_says_so(
    scratch: Scratch, version: str, side: str
) -> None:
    prefix = scratch.tmp / "npm"
    _npm_install(prefix, "@anthropic-ai/claude-code", version, "cli.js", "claude")
    env = _with_path(scratch, prefix / "bin")
    row = _rows(scratch, env)["Claude Code version"]
    assert row["status"] == "warn"
    assert row["summary"] == (
        f"{version} is {side} than any version lich-hooks was verified on "
        f"(verified: {VERIFIED['claude'].range})"
    )
    ran = scratch.cli("doctor", env=env)
    assert f"[warn] Claude Code version: {version} is {side} than any version" in ran.stdout


def test_the_native_installer_names_the_version_in_its_path(scratch: Scratch) -> None:
    versions = scratch.home / ".local" / "share" / "claude" / "versions"
    versions.mkdir(parents=True)
    binary = versions / "2.1.200"
    binary.write_bytes(b"\x7fELF not really")  # never run: the path says it
    binary.chmod(0o755)
    bin_dir = scratch.home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "claude").symlink_to(binary)
    row = _rows(scratch, _with_path(scratch, bin_dir))["Claude Code version"]
    assert (row["status"], row["details"]["version"]) == ("ok", "2.1.200")  # type: ignore[index]


def test_a_platform_package_and_an_unreadable_version(scratch: Scratch) -> None:
    """Codex's platform package says `0.171.0-linux-x64`; opencode with no package.json and
    no safe `--version` to run is shown without a version."""
    platform = scratch.tmp / "codex" / "node_modules" / "@openai" / "codex-linux-x64"
    (platform / "bin").mkdir(parents=True)
    (platform / "package.json").write_text(
        '{"name": "@openai/codex", "version": "0.171.0-linux-x64"}'
    )
    (platform / "bin" / "codex").write_text("#!/bin/sh\nexit 3\n")
    (platform / "bin" / "codex").chmod(0o755)
    loose = scratch.tmp / "loose"
    loose.mkdir()
    (loose / "opencode").write_text("#!/bin/sh\nexit 3\n")
    (loose / "opencode").chmod(0o755)
    rows = _rows(scratch, _with_path(scratch, platform / "bin", loose))
    assert rows["Codex version"]["details"]["version"] == "0.171.0"  # type: ignore[index]
    assert rows["opencode version"]["status"] == "info"
    assert "version not readable" in str(rows["opencode version"]["summary"])


def test_claude_native_binary_outside_any_package_is_asked(scratch: Scratch) -> None:
    """A native executable (not a script) with no package.json: `claude --version` is run.
    The stand-in is Python's own binary, which answers `Python 3.x.y`."""
    bin_dir = scratch.tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(os.path.realpath(sys.executable))
    row = _rows(scratch, _with_path(scratch, bin_dir))["Claude Code version"]
    expected = ".".join(map(str, sys.version_info[:3]))
    assert row["details"]["version"] == expected  # type: ignore[index]
    assert row["status"] == "warn"


def test_version_key_ignores_tags() -> None:
    key = verified.version_key
    assert key("0.171.0-linux-x64") == (0, 171, 0)
    assert key("2.1.45") < key("2.1.332") < key("2.2.0")
    assert key("codex-cli 0.156.1") == (0, 156, 1)
    assert key("nonsense") == ()
