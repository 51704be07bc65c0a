"""docs/install.md: uninstall puts back exactly what install found.

The containers a user had before install (`"hooks": {}`, an event's `[]`,
with or without a comment of theirs on them) stay through install and
uninstall, byte for byte; the ones install made go with our entries. A failed
write leaves no backup of its own behind.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.operator.conftest import Scratch
from tests.operator.test_install import HARNESSES, commands_in, user_file
from tests.support.runner import LICH_HOOK

EMPTY_HOOKS = '{\n  "model": "opus",\n  "hooks": {}\n}\n'
EMPTY_EVENT = '{\n  "hooks": {\n    "PreToolUse": []\n  }\n}\n'
FRESH = '{\n  "model": "opus"\n}\n'


def round_trip(scratch: Scratch, harness: str, original: str) -> str:
    path = user_file(scratch, harness)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original)
    installed = scratch.cli("install", harness)
    assert installed.returncode == 0, installed.stderr
    assert commands_in(json.loads(path.read_text()) if harness != "crush" else _jsonc(path))
    removed = scratch.cli("uninstall", harness)
    assert removed.returncode == 0, removed.stderr
    return path.read_text()


def _jsonc(path: Path) -> object:
    from lich_hooks.human.settings import jsontext

    parsed = jsontext.parse(path.read_text(), jsonc=True)
    assert parsed.root is not None
    return parsed.root.value


@pytest.mark.parametrize("harness", [h for h in HARNESSES if h != "antigravity"])
@pytest.mark.parametrize("original", [EMPTY_HOOKS, EMPTY_EVENT, FRESH], ids=["{}", "[]", "none"])
def test_the_users_empty_containers_come_back(
    scratch: Scratch, harness: str, original: str
) -> None:
    """Before: `"hooks": {}` and `"PreToolUse": []` were deleted by uninstall."""
    assert round_trip(scratch, harness, original) == original


def test_a_comment_on_the_users_container_does_not_make_uninstall_refuse(
    scratch: Scratch,
) -> None:
    """Before: uninstall refused ("would remove the comment"), so it could not undo install."""
    original = '{\n  // my own hooks go here\n  "hooks": {}\n}\n'
    assert round_trip(scratch, "crush", original) == original


def test_without_a_record_an_empty_container_with_a_comment_stays(scratch: Scratch) -> None:
    """An install by an older lich-hook left no record: a container under a comment is kept."""
    path = user_file(scratch, "crush")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{\n  // mine\n  "hooks": {}\n}\n')
    assert scratch.cli("install", "crush").returncode == 0
    shutil.rmtree(Path(scratch.env["LICH_HOOK_STATE_DIR"]) / "installed", ignore_errors=True)
    ran = scratch.cli("uninstall", "crush")
    assert ran.returncode == 0, ran.stderr
    assert path.read_text() == '{\n  // mine\n  "hooks": {}\n}\n'


def test_without_a_record_what_install_made_still_goes(scratch: Scratch) -> None:
    path = user_file(scratch, "claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FRESH)
    assert scratch.cli("install", "claude").returncode == 0
    shutil.rmtree(Path(scratch.env["LICH_HOOK_STATE_DIR"]) / "installed", ignore_errors=True)
    assert scratch.cli("uninstall", "claude").returncode == 0
    assert path.read_text() == FRESH


def test_a_reinstall_keeps_what_the_first_install_found(scratch: Scratch) -> None:
    path = user_file(scratch, "claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FRESH)
    assert scratch.cli("install", "claude").returncode == 0
    assert scratch.cli("install", "claude").returncode == 0  # an upgrade: nothing new found
    assert scratch.cli("uninstall", "claude").returncode == 0
    assert path.read_text() == FRESH


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=10, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs unshare -rm (a mount namespace)")
def test_a_failed_write_leaves_no_backup(scratch: Scratch) -> None:
    """A settings file on a read-only bind mount: the rename over it fails (EBUSY).

    Before: the refused install left a fresh `.lich-hook.bak` beside it.
    """
    path = user_file(scratch, "claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FRESH)
    script = f"mount --bind -o ro '{path}' '{path}' && exec '{LICH_HOOK}' install claude"
    ran = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        env=scratch.env,
        cwd=scratch.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 1, ran.stderr
    assert "install failed: cannot write" in ran.stderr
    assert path.read_text() == FRESH
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
