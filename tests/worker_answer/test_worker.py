"""Who is a worker (docs/worker-answer.md), exhaustively: LichEnv.is_worker, then the same table
through the console script, where a non-worker's Stop must cost nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from lich_hooks.base.lichenv import LichEnv
from lich_hooks.human.standin.server import StandIn
from tests.support.runner import LICH_HOOK, base_env, run_hook, wait_for_log

ABSENT = None
# (LICH_SUBAGENT_DEPTH, LICH_SUBAGENT_CARDS) -> worker?
TABLE = [
    ("1", ABSENT, True),
    ("2", ABSENT, True),
    ("17", ABSENT, True),
    ("01", ABSENT, True),  # an integer above 0, written with a leading zero
    ("1", "off", True),
    ("1", "on", True),
    ("0", ABSENT, False),
    ("0", "off", False),  # a depth decides: top-level session with cards off
    ("-1", ABSENT, False),
    ("-1", "off", False),
    ("1.5", ABSENT, False),
    ("1.0", ABSENT, False),
    ("abc", ABSENT, False),
    ("abc", "off", False),  # present but not an integer: still decides, no fallback
    ("", ABSENT, False),
    ("", "off", False),  # an empty value is present, not absent
    (" 1", ABSENT, False),
    ("1 ", ABSENT, False),
    ("+1", ABSENT, False),
    ("1e3", ABSENT, False),
    ("0x1", ABSENT, False),
    ("١", ABSENT, False),  # ARABIC-INDIC DIGIT ONE: a digit, not ASCII
    ("¹", ABSENT, False),  # SUPERSCRIPT ONE
    ("-0", ABSENT, False),
    (ABSENT, "off", True),  # an older lich marks every worker this way
    (ABSENT, "OFF", True),
    (ABSENT, " off ", True),
    (ABSENT, "on", False),
    (ABSENT, "", False),
    (ABSENT, "of", False),
    (ABSENT, "false", False),
    (ABSENT, ABSENT, False),
]
IDS = [f"depth={d!r},cards={c!r}" for d, c, _ in TABLE]


def _vars(depth: str | None, cards: str | None) -> dict[str, str]:
    found = {}
    if depth is not None:
        found["LICH_SUBAGENT_DEPTH"] = depth
    if cards is not None:
        found["LICH_SUBAGENT_CARDS"] = cards
    return found


@pytest.mark.parametrize(("depth", "cards", "worker"), TABLE, ids=IDS)
def test_is_worker(depth: str | None, cards: str | None, worker: bool) -> None:
    assert LichEnv(_vars(depth, cards)).is_worker is worker


def test_is_worker_needs_no_lich_connection() -> None:
    """Worker-ness is about the card's kind; can_report is checked separately."""
    env = LichEnv({"LICH_SUBAGENT_DEPTH": "1"})
    assert (env.is_worker, env.can_report) == (True, False)


STOP: dict[str, object] = {
    "session_id": "s",
    "last_assistant_message": "Done.",
    "background_tasks": [],
}


@pytest.mark.parametrize(("depth", "cards", "worker"), TABLE, ids=IDS)
def test_through_the_console_script(
    tmp_path: Path, lich: StandIn, depth: str | None, cards: str | None, worker: bool
) -> None:
    env = base_env(
        tmp_path, **lich.env("card-9"), **_vars(depth, cards), CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    ran = run_hook("Stop claude", STOP, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    if worker:
        assert record["decision"] == "answer"
        [request] = lich.wait(1)
        assert request.accepted == {"session_id": "card-9", "text": "Done."}
    else:
        assert record["decision"] == "not-worker"
        assert "interactive" not in record  # decided before the interactive check
        assert lich.received == []


def test_non_worker_decides_before_reading_stdin(tmp_path: Path, lich: StandIn) -> None:
    """The no-op path never touches stdin: a harness that never closes it still
    gets `not-worker` (reading would have ended in bad input after ~2 s)."""
    env = base_env(tmp_path, **lich.env("card-9"), LICH_SUBAGENT_DEPTH="0")
    proc = subprocess.Popen(
        [str(LICH_HOOK), "Stop", "claude"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(STOP).encode()[:5])  # a payload that never completes
    proc.stdin.flush()
    try:
        proc.wait(timeout=30)  # stdin still open
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.stdin.close()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert (proc.returncode, out, err) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "not-worker"
    assert "bad_input" not in record


def test_non_worker_imports_nothing_heavy(tmp_path: Path) -> None:
    """docs/performance.md: the non-worker Stop is a no-op path."""
    env = base_env(
        tmp_path, LICH_PORT="1", LICH_TOKEN="x" * 16, LICH_SESSION_ID="c", LICH_SUBAGENT_DEPTH="0"
    )
    probe = (
        "import sys, os; before = set(sys.modules); from lich_hooks.hook import run as hook; "
        "hook.run('Stop', 'claude', os.environ); "
        "heavy = {'json', 're', 'requests', 'orjson', 'click', 'subprocess', 'typing', "
        "'lich_hooks.hook.interactive', 'lich_hooks.hook.jobs.transcript', "
        "'lich_hooks.base.transport'}; "
        "print(sorted(heavy & (set(sys.modules) - before)))"
    )
    python = str(LICH_HOOK.parent / "python")
    # The JSON log would import json itself; the debug line says the decision without it,
    # so a run that crashed (and so imported nothing) cannot pass for a no-op.
    del env["LICH_HOOK_LOG"]
    env["LICH_HOOK_DEBUG"] = "1"
    proc = subprocess.run(
        [python, "-c", probe], stdin=subprocess.DEVNULL, env=env, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b"lich-hook: Stop claude: not-worker\n"
    assert proc.stdout.strip() == b"[]"
