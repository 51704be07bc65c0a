"""install/uninstall change a settings file's content, never what it is
(commands/settings_io.py); doctor reads what install reads."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from lich_hooks.human.settings.ours import our_commands
from lich_hooks.human.standin.server import StandIn
from tests.operator.conftest import Scratch
from tests.support.runner import LICH_HOOK

FOREIGN = '{\n  "model": "opus",\n  "env": {"A": "1"}\n}\n'


def settings(box: Scratch) -> Path:
    path = box.home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def ours(path: Path) -> list[str]:
    document: object = json.loads(path.read_text())
    return our_commands(document)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can write a file another user owns")
def test_root_installing_into_a_users_file_leaves_it_theirs(scratch: Scratch) -> None:
    path = settings(scratch)
    path.write_text(FOREIGN)
    os.chmod(path, 0o600)
    os.chown(path, 65534, 65534)
    for verb in ("install", "uninstall"):
        ran = scratch.cli(verb, "claude")
        assert ran.returncode == 0, ran.stderr
        for written in (path, Path(str(path) + ".lich-hook.bak")):
            info = written.stat()
            assert (info.st_uid, info.st_gid) == (65534, 65534), (verb, written)
            assert stat.S_IMODE(info.st_mode) == 0o600, (verb, written)
    assert path.read_text() == FOREIGN


@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_file_read_only_to_its_owner_is_refused_unless_forced(
    verb: str, scratch: Scratch
) -> None:
    path = settings(scratch)
    if verb == "uninstall":
        path.write_text(FOREIGN)
        assert scratch.cli("install", "claude").returncode == 0
    else:
        path.write_text(FOREIGN)
    before = path.read_bytes()
    os.chmod(path, 0o444)
    ran = scratch.cli(verb, "claude")
    assert ran.returncode == 1
    assert "read-only" in ran.stderr and "--force" in ran.stderr
    assert path.read_bytes() == before
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    ran = scratch.cli(verb, "claude", "--force")
    assert ran.returncode == 0, ran.stderr
    assert bool(ours(path)) == (verb == "install")
    assert stat.S_IMODE(path.stat().st_mode) == 0o444  # forced, and still read-only


def test_duplicate_keys_keep_the_foreign_bytes(scratch: Scratch) -> None:
    path = settings(scratch)
    text = (
        "{\n"
        '  "model": "sonnet",\n'
        '  "statusLine": {"type": "command",   "command": "x"},\n'
        '  "model": "opus"\n'
        "}\n"
    )
    path.write_text(text)
    assert scratch.cli("install", "claude").returncode == 0
    now = path.read_text()
    for line in text.splitlines()[1:4]:
        assert line.rstrip(",") in now, line
    assert json.loads(now)["model"] == "opus"  # the meaning (last one wins) is kept
    assert ours(path)
    assert scratch.cli("uninstall", "claude").returncode == 0
    assert path.read_text() == text


def test_a_fifo_settings_file_is_refused_at_once(scratch: Scratch) -> None:
    path = settings(scratch)
    os.mkfifo(path)
    for verb in ("install", "uninstall"):
        ran = scratch.cli(verb, "claude")  # scratch.cli's 60 s timeout: a hang fails
        assert ran.returncode == 1
        assert "FIFO" in ran.stderr and "nothing was changed" in ran.stderr
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    ran = scratch.cli("doctor")
    assert "Traceback" not in ran.stderr


@pytest.mark.parametrize(
    "record",
    [".codex/config.toml", ".claude/plugins/installed_plugins.json", ".claude/settings.json"],
)
def test_doctor_does_not_wait_on_a_fifo_in_a_harness_record(scratch: Scratch, record: str) -> None:
    """doctor reads Codex's and Claude Code's own records through install's reader too."""
    path = scratch.home / record
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    ran = scratch.cli("doctor")  # scratch.cli's 60 s timeout: a hang fails
    assert "Traceback" not in ran.stderr
    assert stat.S_ISFIFO(os.lstat(path).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_device_settings_file_is_refused(scratch: Scratch) -> None:
    device = scratch.tmp / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    settings(scratch).symlink_to(device)
    ran = scratch.cli("install", "claude")
    assert ran.returncode == 1 and "device" in ran.stderr
    assert stat.S_ISCHR(os.stat(device).st_mode)
    assert sorted(p.name for p in scratch.tmp.iterdir() if p.name.startswith(".null")) == []


@pytest.mark.slow
def test_doctor_reads_a_valid_settings_file_of_1_5_mib(scratch: Scratch) -> None:
    path = settings(scratch)
    path.write_text(json.dumps({"note": "x" * (1536 * 1024), "hooks": {}}, indent=2))
    assert scratch.cli("install", "claude").returncode == 0
    ran = scratch.cli("doctor", "--json")
    rows = {row["name"]: row for row in json.loads(ran.stdout)["checks"]}
    row = rows["Claude Code user settings"]
    assert row["status"] != "fail", row
    assert "lich-hook entr" in str(row["summary"])


def test_doctor_with_a_token_that_is_not_utf8(scratch: Scratch) -> None:
    """The hook reports fine with such a token: doctor must check, and never show it."""
    with StandIn() as lich:
        env = {k.encode(): v.encode() for k, v in scratch.env.items()}
        env.update({b"LICH_PORT": str(lich.port).encode(), b"LICH_SESSION_ID": b"card-1"})
        env[b"LICH_TOKEN"] = b"tok\xff\xfe-secret"
        ran = subprocess.run(
            [str(LICH_HOOK), "doctor"],
            env=env,
            cwd=scratch.project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    out = ran.stdout + ran.stderr
    assert b"Traceback" not in out and b"internal error" not in out
    assert b"lich listener" in ran.stdout and b"lich token" in ran.stdout
    assert b"state directory" in ran.stdout
    for form in (b"tok\xff\xfe", b"%FF%FE", b"\\udcff", b"-secret"):
        assert form not in out
