"""The registered Crush guard ends an already-reported tool call in the shell (issue 31).

Crush runs a hook in its own in-process shell, so `$$` there is the crush
process, and it exports CRUSH_SESSION_ID. Here that shell is /bin/sh started
as `crush` (its argv, which is what the hook reads), kept running so every call
has one `$$`, as in one Crush process. The program is a wrapper that counts
its starts, then execs the real `lich-hook`: a call the guard ends never starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.hook.state import session_record
from lich_hooks.human.settings import commandline
from lich_hooks.human.standin.server import StandIn
from tests.support.runner import LICH_HOOK, base_env, log_records, wait_for_log

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc for the parent")


class LocalCrush:
    """One `crush` shell running the registered command for each call, in order."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.ran = tmp / "ran"
        program = tmp / "bin" / "lich-hook"
        program.parent.mkdir()
        program.write_text(f'#!/bin/sh\necho x >> "{self.ran}"\nexec "{LICH_HOOK}" "$@"\n')
        program.chmod(0o755)
        self.command = commandline.render(commandline.SERVER, str(program), "PreToolUse", "crush")
        self.payload = tmp / "payload.json"
        self.cwd = tmp
        self.shell = subprocess.Popen(
            ["crush"],
            executable="/bin/sh",
            env=env,
            cwd=tmp,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.calls = 0

    @property
    def starts(self) -> int:
        return len(self.ran.read_text().splitlines()) if self.ran.exists() else 0

    def call(self, sid: str, **variables: str) -> None:
        """One PreToolUse of conversation `sid`; returns when the command has ended."""
        assert self.shell.stdin is not None and self.shell.stdout is not None
        self.calls += 1
        self.payload.write_text(json.dumps({"event": "PreToolUse", "session_id": sid,
                                            "cwd": str(self.cwd), "tool_name": "ls",
                                            "tool_input": {}}))  # fmt: skip
        exports = "".join(
            f"export {k}='{v}'; " for k, v in {"CRUSH_SESSION_ID": sid, **variables}.items()
        )
        self.shell.stdin.write(f"{exports}{{ {self.command}; }} < '{self.payload}'; echo done\n")
        self.shell.stdin.flush()
        assert self.shell.stdout.readline().strip() == "done"

    def close(self) -> None:
        assert self.shell.stdin is not None
        self.shell.stdin.close()
        self.shell.wait(5)


@pytest.fixture
def crush_env(tmp_path: Path, lich: StandIn) -> dict[str, str]:
    return base_env(tmp_path, **lich.env("card-1"))


@pytest.fixture
def crush(tmp_path: Path, crush_env: dict[str, str]) -> Iterator[LocalCrush]:
    local = LocalCrush(tmp_path, crush_env)
    try:
        yield local
    finally:
        local.close()


def marks(env: dict[str, str]) -> list[str]:
    folder = Path(env["LICH_HOOK_STATE_DIR"]) / commandline.MARKS
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_reported_conversation_ends_in_the_shell_until_the_card_reports_another(
    crush: LocalCrush, crush_env: dict[str, str], lich: StandIn
) -> None:
    pid = crush.shell.pid
    crush.call("sess-1")
    wait_for_log(crush_env, 1)
    assert (crush.starts, marks(crush_env)) == (1, [f"card-1.sess-1.{pid}"])
    crush.call("sess-1")
    crush.call("sess-1")
    assert crush.starts == 1  # nothing started: the guard found the mark
    crush.call("sess-2")  # the card reports another conversation: sess-1's mark goes
    wait_for_log(crush_env, 2)
    assert marks(crush_env) == [f"card-1.sess-2.{pid}"]
    crush.call("sess-1")
    wait_for_log(crush_env, 3)
    assert crush.starts == 3
    ids = [r.accepted["provider_session_id"] for r in lich.wait(3) if r.accepted]
    assert ids == ["sess-1", "sess-2", "sess-1"]


def test_a_failed_report_leaves_no_mark(tmp_path: Path) -> None:
    with StandIn() as gone:
        env = base_env(tmp_path, **gone.env("card-1"))
    crush = LocalCrush(tmp_path, env)  # lich is not listening: the report fails
    try:
        crush.call("sess-1")
        wait_for_log(env, 1)
        assert marks(env) == []
        crush.call("sess-1")
        wait_for_log(env, 2)
        assert crush.starts == 2
    finally:
        crush.close()


def test_a_moved_state_directory_loses_nothing(
    crush: LocalCrush, crush_env: dict[str, str], lich: StandIn, tmp_path: Path
) -> None:
    crush.call("sess-1")
    wait_for_log(crush_env, 1)
    crush.call("sess-1", LICH_HOOK_STATE_DIR=str(tmp_path / "elsewhere"))
    wait_for_log(crush_env, 2)
    assert crush.starts == 2 and len(lich.wait(2)) == 2  # no record there: reported again


def test_no_mark_where_the_shell_would_spell_another_path(tmp_path: Path, lich: StandIn) -> None:
    """A card id that is not its own file name, or a state directory the guard's expansion
    does not name (a relative XDG_STATE_HOME the hook ignores): reported and deduped by the
    record, no mark."""
    for n, extra in enumerate(
        [{"LICH_SESSION_ID": "card.1"}, {"LICH_SESSION_ID": "card/1"}, {"LICH_HOOK_STATE_DIR": ""}]
    ):
        where = tmp_path / str(n)
        where.mkdir()
        env = base_env(where, **{**lich.env("card-1"), **extra})
        if not env["LICH_HOOK_STATE_DIR"]:
            env["XDG_STATE_HOME"] = "relative/state"
        crush = LocalCrush(where, env)
        try:
            crush.call("sess-1")
            wait_for_log(env, 1)
            crush.call("sess-1")
            decisions = [r["decision"] for r in wait_for_log(env, 2)]
        finally:
            crush.close()
        assert decisions == ["report", "already-reported"], extra
        state = Path(env["LICH_HOOK_STATE_DIR"] or Path(env["HOME"]) / ".local/state/lich-hooks")
        assert not (state / commandline.MARKS).exists() or not list(
            (state / commandline.MARKS).iterdir()
        ), extra


def test_an_already_reported_call_marks_a_new_crush_process(
    tmp_path: Path, crush_env: dict[str, str]
) -> None:
    """Crush restarted (another `$$`) on the conversation the card reported: one Python
    start finds it reported and marks it for this process."""
    first = LocalCrush(tmp_path, crush_env)
    try:
        first.call("sess-1")
        wait_for_log(crush_env, 1)
    finally:
        first.close()
    (tmp_path / "bin" / "lich-hook").unlink()
    (tmp_path / "bin").rmdir()
    again = LocalCrush(tmp_path, crush_env)
    try:
        again.call("sess-1")
        again.call("sess-1")
        assert [r["decision"] for r in log_records(crush_env)] == ["report", "already-reported"]
        assert f"card-1.sess-1.{again.shell.pid}" in marks(crush_env)
    finally:
        again.close()


def test_a_mark_stays_only_while_the_record_holds_its_conversation(
    crush_env: dict[str, str],
) -> None:
    """The order that keeps a skip one the record would make: a mark re-reads the record
    after it is made; a forget removes the record, then the card's marks."""
    session_record.remember_reported(crush_env, "card-1", "crush\nsess-2")
    session_record.mark(crush_env, "card-1", "crush\nsess-1", "card-1.sess-1.7")
    assert marks(crush_env) == []
    session_record.mark(crush_env, "card-1", "crush\nsess-2", "card-1.sess-2.7")
    session_record.mark(crush_env, "card-10", "crush\nsess-2", "card-10.sess-2.7")
    assert marks(crush_env) == ["card-1.sess-2.7"]  # card-10 holds no such record
    session_record.remember_reported(crush_env, "card-10", "crush\nsess-2")
    session_record.mark(crush_env, "card-10", "crush\nsess-2", "card-10.sess-2.7")
    session_record.forget_reported(crush_env, "card-1")
    assert marks(crush_env) == ["card-10.sess-2.7"]
    assert (
        os.stat(Path(crush_env["LICH_HOOK_STATE_DIR"]) / commandline.MARKS).st_mode & 0o777 == 0o700
    )
