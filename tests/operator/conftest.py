"""Every operator test runs against a scratch home and a scratch project.

`install` writes into people's harness settings, so these tests guard the real
ones: the autouse fixture points every location variable at tmp, runs the test
from a scratch project directory, and FAILS the test if any real harness
settings file or directory (in the real home or in the repository the suite
runs from) changed while it ran.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.runner import BIN_DIR, LICH_HOOK, base_env

REPO = Path(__file__).resolve().parents[2]


def _real_home() -> Path:
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def guarded_paths() -> list[Path]:
    """The files and directories `install` or `doctor` could write outside a scratch home."""
    home = _real_home()
    paths = [
        home / ".claude",
        home / ".claude" / "settings.json",
        home / ".codex",
        home / ".codex" / "hooks.json",
        home / ".config" / "crush",
        home / ".config" / "crush" / "crush.json",
        home / ".gemini" / "config",
        home / ".gemini" / "config" / "hooks.json",
        home / ".local" / "state" / "lich-hooks",
        home / ".config" / "opencode" / "plugins",
        home / ".config" / "opencode" / "plugins" / "lich-hooks.js",
        home / ".omp" / "agent" / "extensions",
        home / ".omp" / "agent" / "extensions" / "lich-hooks.ts",
    ]
    for base in (REPO, Path.cwd()):
        paths += [
            base / ".claude",
            base / ".claude" / "settings.json",
            base / ".codex",
            base / ".codex" / "hooks.json",
            base / "crush.json",
            base / ".crush.json",
            base / ".agents",
            base / ".agents" / "hooks.json",
            base / ".opencode" / "plugins" / "lich-hooks.js",
            base / ".omp" / "extensions" / "lich-hooks.ts",
        ]
    return list(dict.fromkeys(paths))


def snapshot(paths: list[Path]) -> dict[Path, tuple[int, int, tuple[str, ...]] | None]:
    state: dict[Path, tuple[int, int, tuple[str, ...]] | None] = {}
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            state[path] = None
            continue
        listing = tuple(sorted(os.listdir(path))) if path.is_dir() else ()
        state[path] = (info.st_mtime_ns, info.st_size, listing)
    return state


class Scratch:
    """A scratch home and project, and the environment a harness would give the hook."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.project = tmp / "project"
        self.project.mkdir()
        self.env = base_env(
            tmp,
            CODEX_HOME=str(self.home / ".codex"),
            CRUSH_GLOBAL_CONFIG=str(self.home / ".config" / "crush"),
        )

    def cli(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """The real console script, as a person runs it from the project directory."""
        return subprocess.run(
            [str(LICH_HOOK), *args],
            env=env or self.env,
            cwd=cwd or self.project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


@pytest.fixture(autouse=True)
def scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Scratch]:
    paths = guarded_paths()
    before = snapshot(paths)
    box = Scratch(tmp_path)
    for name in ("CLAUDE_CONFIG_DIR", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "CODEX_HOME", "CRUSH_GLOBAL_CONFIG"):
        monkeypatch.setenv(name, box.env[name])
    monkeypatch.setenv("LICH_HOOK_STATE_DIR", box.env["LICH_HOOK_STATE_DIR"])
    monkeypatch.chdir(box.project)
    yield box
    after = snapshot(paths)
    changed = [str(path) for path in paths if before[path] != after[path]]
    if changed:
        pytest.fail(
            f"{request.node.name} changed real settings outside its scratch home: {changed}"
        )


__all__ = ["BIN_DIR", "Scratch"]
