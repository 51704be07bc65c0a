from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.runner import watch_log
from tests.windows import wine

_started: dict[str, float] = {}


@pytest.fixture(scope="session")
def windows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wine.Windows]:
    """The Windows CPython under Wine, for the whole session (built under .cache/ once).

    No Wine here: the suite skips with the reason, except in CI (CI=true), where
    .ci/run installs Wine, so its absence fails.
    """
    started = time.monotonic()
    wine.CACHE.mkdir(parents=True, exist_ok=True)
    # One session at a time on the prefix (.cache may be shared by clones): each maps T: to
    # its own temp dir and ends the one wineserver.
    with open(wine.CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            found = wine.start(tmp_path_factory.getbasetemp())
        except wine.Missing as error:
            if os.environ.get("CI") == "true":
                pytest.fail(f"CI must run the Windows suite: {error}", pytrace=False)
            pytest.skip(f"no Windows suite here: {error}")
        _started["setup"] = time.monotonic() - started
        try:
            yield found
        finally:
            wine.stop()


@pytest.fixture
def win_env(windows: wine.Windows, tmp_path: Path) -> dict[str, str]:
    """A harness's Windows environment outside lich: a private profile under T:, a run log."""
    return windows_env(windows, tmp_path)


def windows_env(windows: wine.Windows, tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    for sub in ("AppData/Local", "AppData/Roaming"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    watch_log(tmp_path / "hook.log")
    env = {
        "USERPROFILE": windows.path(home),
        "LOCALAPPDATA": windows.path(home / "AppData" / "Local"),
        "APPDATA": windows.path(home / "AppData" / "Roaming"),
        "LICH_HOOK_LOG": windows.path(tmp_path / "hook.log"),
    }
    env.update(extra)
    return env
