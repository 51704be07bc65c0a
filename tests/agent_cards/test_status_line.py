"""docs/agent-cards.md: `lich-hook status-line [-- <command…>]`."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session
from tests.support.runner import log_records, run_hook

STATUS_PAYLOAD = {
    "hook_event_name": "Status",
    "session_id": "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10",
    "model": {"id": "claude-opus-4-5", "display_name": "Opus"},
    "workspace": {"current_dir": "/work/project"},
}


def open_worker(
    env: dict[str, str], fake: FakeLich, project: Path, name: str, isolated: bool = False
) -> None:
    fake.script(open={"json": session("pending", name=name)})
    extra = {"isolation": "worktree"} if isolated else {}
    ran = run_hook("PreToolUse claude", agent_payload(project, **extra), env)
    assert reason(ran.stdout).startswith("Not an error:")


def rows(*pairs: tuple[str, str]) -> dict[str, object]:
    listed = [
        {"label": n, "name": n, "project": "p", "kind": "claude", "state": s, "id": f"sess-{n}"}
        for n, s in pairs
    ]
    return {"json": listed}


def status(env: dict[str, str], *extra: str) -> bytes:
    ran = run_hook("status-line " + " ".join(extra), STATUS_PAYLOAD, env)
    assert (ran.returncode, ran.stderr) == (0, b"")
    return ran.stdout


def sessions_calls(fake: FakeLich) -> int:
    return sum(1 for argv in fake.argvs() if argv == ["sessions", "--json"])


def test_nothing_at_zero_and_lich_not_asked(card_env: dict[str, str], fake: FakeLich) -> None:
    """Nothing printed because nothing runs, not because counting crashed: a crash looks
    the same from outside, and leaves only its `internal-error` line in the log."""
    assert status(card_env) == b""
    assert fake.calls() == []
    assert [r["decision"] for r in log_records(card_env)] == []


def test_counts_running_workers(card_env: dict[str, str], fake: FakeLich, project: Path) -> None:
    open_worker(card_env, fake, project, "w-a")
    # even those lich still lists: past the prune age a record is the pruner's
    fake.script(sessions=rows(("w-a", "running"), *((f"w-old-{n}", "running") for n in range(50))))
    assert status(card_env) == b"lich: 1 worker\n"
    open_worker(card_env, fake, project, "w-b")
    # within the 5 s window the record alone counts: a new worker shows at once
    assert status(card_env) == b"lich: 2 workers\n"


def test_finished_workers_drop_out(card_env: dict[str, str], fake: FakeLich, project: Path) -> None:
    open_worker(card_env, fake, project, "shared-gone")
    open_worker(card_env, fake, project, "shared-busy")
    open_worker(card_env, fake, project, "iso-done", isolated=True)
    open_worker(card_env, fake, project, "iso-busy", isolated=True)
    open_worker(card_env, fake, project, "iso-gone", isolated=True)
    fake.script(
        sessions=rows(
            ("shared-busy", "done"),  # a shared worker is finished only when unlisted
            ("iso-done", "done"),
            ("iso-busy", "running"),
        )
    )
    assert status(card_env) == b"lich: 2 workers\n"
    names = {p.stem for p in (Path(card_env["LICH_HOOK_STATE_DIR"]) / "workers/card-1").iterdir()}
    assert names - {".checked"} == {"shared-busy", "iso-busy"}


def test_a_renamed_worker_is_matched_by_session_id(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-a")
    fake.script(
        sessions={"json": [{"label": "x", "name": "renamed", "state": "running", "id": "sess-w-a"}]}
    )
    assert status(card_env) == b"lich: 1 worker\n"


def test_failing_sessions_keeps_the_count(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-a")
    open_worker(card_env, fake, project, "w-b")
    fake.script(sessions={"exit": 1, "stderr": "lich is not running\n"})
    assert status(card_env) == b"lich: 2 workers\n"
    assert sessions_calls(fake) == 1
    fake.script(sessions={"stdout": "not json"})
    expire_cache(card_env)
    assert status(card_env) == b"lich: 2 workers\n"
    assert sessions_calls(fake) == 2


def expire_cache(env: dict[str, str]) -> None:
    checked = Path(env["LICH_HOOK_STATE_DIR"]) / "workers" / "card-1" / ".checked"
    checked.write_text(repr(time.time() - 60))


def test_lich_is_asked_at_most_every_five_seconds(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-a")
    # even those lich still lists: past the prune age a record is the pruner's
    fake.script(sessions=rows(("w-a", "running"), *((f"w-old-{n}", "running") for n in range(50))))
    assert status(card_env) == b"lich: 1 worker\n"
    fake.script(sessions=rows())  # lich no longer lists it, but the cache still holds
    assert status(card_env) == b"lich: 1 worker\n"
    assert sessions_calls(fake) == 1
    expire_cache(card_env)
    assert status(card_env) == b""
    assert sessions_calls(fake) == 2


def user_status_line(tmp: Path) -> str:
    script = tmp / "my-status.py"
    script.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "print(f\"[{data['model']['display_name']}] {sys.argv[1]}\")\n"
    )
    return f"{sys.executable} {script} 'two words'"


def test_composes_with_the_users_command(
    tmp_path: Path, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    command = user_status_line(tmp_path)
    assert status(card_env, "--", command) == b"[Opus] two words\n"
    open_worker(card_env, fake, project, "w-a")
    fake.script(sessions=rows(("w-a", "running")))
    assert status(card_env, "--", command) == b"[Opus] two words\nlich: 1 worker\n"


def test_users_command_alone_outside_lich(tmp_path: Path, card_env: dict[str, str]) -> None:
    env = {k: v for k, v in card_env.items() if not k.startswith("LICH_SESSION")}
    assert status(env, "--", user_status_line(tmp_path)) == b"[Opus] two words\n"


def test_missing_user_command_prints_only_ours(card_env: dict[str, str]) -> None:
    assert status(card_env, "--", "/nonexistent/status") == b""


def test_language(card_env: dict[str, str], fake: FakeLich, project: Path) -> None:
    open_worker(card_env, fake, project, "w-a")
    fake.script(sessions=rows(("w-a", "running")))
    out = status({**card_env, "LICH_PROMPT_LANG": "zh-CN"})
    assert out.decode() == "lich：1 个 worker\n"


def test_lich_answers_even_when_a_helper_keeps_its_output_open(
    tmp_path: Path, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    # `sessions` exits 0 with the list; what it started must not turn that into
    # "lich could not say" (which would keep a finished worker counted).
    open_worker(card_env, fake, project, "w-a")
    linger = tmp_path / "helper.pid"
    fake.script(sessions={**rows(), "linger": str(linger)})
    try:
        assert status(card_env) == b""
    finally:
        os.kill(int(linger.read_text()), signal.SIGKILL)


def test_output_passes_through_whatever_pythons_stdout_encoding(
    tmp_path: Path, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    # On Windows a piped stdout encodes as the ANSI code page (cp1252 here):
    # an emoji in the user's line, or our Chinese text, must still come out.
    script = tmp_path / "emoji-status.py"
    script.write_text(
        "import sys\nsys.stdout.buffer.write('🌿 main \\xff'.encode() + b'\\xff\\n')\n"
    )
    env = {**card_env, "PYTHONIOENCODING": "cp1252", "LICH_PROMPT_LANG": "zh-CN"}
    open_worker(card_env, fake, project, "w-a")
    fake.script(sessions=rows(("w-a", "running")))
    out = status(env, "--", f"{sys.executable} {script}")
    assert out == "🌿 main \xff".encode() + b"\xff\n" + "lich：1 个 worker\n".encode()


def test_workers_past_the_prune_age_are_not_read(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    """A backlog of workers lich never closed, months old: the status line counts only the
    records within the prune age (14 days) and leaves the rest to the pruner, which runs
    after the line is out (benchmarks/prune_wait.py: 10,000 of them cost ~+20 ms, were +1.5 s).
    """
    open_worker(card_env, fake, project, "w-a")
    [card] = (Path(card_env["LICH_HOOK_STATE_DIR"]) / "workers").iterdir()
    old = time.time() - 60 * 86400
    for n in range(50):
        stale = card / f"w-old-{n}.json"
        stale.write_text(f'{{"name": "w-old-{n}", "when": {old}}}')
        os.utime(stale, (old, old))
    # even those lich still lists: past the prune age a record is the pruner's
    fake.script(sessions=rows(("w-a", "running"), *((f"w-old-{n}", "running") for n in range(50))))
    assert status(card_env) == b"lich: 1 worker\n"
