"""Every operator test runs against a scratch home and a scratch project.

`install` writes into people's harness settings, so the autouse fixture points every location
variable at tmp and runs the test from a scratch project directory. That nothing of ours reaches
the real home or the repository's own settings is the whole suite's guard (tests/conftest.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.runner import BIN_DIR, LICH_HOOK, base_env

REPO = Path(__file__).resolve().parents[2]


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
    box = Scratch(tmp_path)
    for name in ("CLAUDE_CONFIG_DIR", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "CODEX_HOME", "CRUSH_GLOBAL_CONFIG"):
        monkeypatch.setenv(name, box.env[name])
    monkeypatch.setenv("LICH_HOOK_STATE_DIR", box.env["LICH_HOOK_STATE_DIR"])
    monkeypatch.chdir(box.project)
    yield box


__all__ = ["BIN_DIR", "Scratch"]
