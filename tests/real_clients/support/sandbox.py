"""The environment every real client runs in: a throwaway home, never the real one."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from tests.support.runner import BIN_DIR


def throwaway_env(tmp: Path, home: Path, path: Sequence[str] = ()) -> dict[str, str]:
    """HOME, the XDG folders, TMPDIR and lich-hook's log and state, all under `tmp`/`home`.

    `path` goes in front of the test venv's bin folder (where `lich-hook` is) and the
    system's. Each client's driver adds its own variables (TERM, offline switches).
    """
    tmpdir = tmp / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    return {
        "PATH": os.pathsep.join([*path, str(BIN_DIR), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(tmpdir),
        "LANG": "C.UTF-8",
        "LICH_HOOK_LOG": str(tmp / "hook.log"),
        "LICH_HOOK_STATE_DIR": str(tmp / "state"),
    }
