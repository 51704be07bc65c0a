"""docs/troubleshooting.md ("What lich-hook writes"): pruning holds under a hostile state.

- more card directories than the process may open files: still pruned;
- a prune never delays what the harness waits for: the Agent verdict and the
  status line are out (their process gone) before the pruner, a process of
  its own, starts removing;
- a clock that jumped: records dated in the future do not push out the
  record the run just wrote.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lich_hooks.human.standin.server import StandIn
from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session
from tests.spine.helpers import SID
from tests.state.test_prune import REPORTED_MAX, age, files, pruned, running
from tests.support.listeners import wait_until
from tests.support.runner import base_env, run_command, run_hook, wait_for_log

DAY = 86400.0


def stale_workers(root: Path, cards: int) -> None:
    """`cards` card directories under workers/, each with one two-month-old worker."""
    old = time.time() - 60 * DAY
    for i in range(cards):
        card = root / "workers" / f"wcard-{i:05d}"
        card.mkdir(parents=True, mode=0o700)
        worker = card / "w.json"
        worker.write_text(json.dumps({"name": "w", "when": 0}))
        os.utime(worker, (old, old))
        os.utime(card, (old, old))


def test_more_card_directories_than_open_files_are_pruned(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    """Before: one descriptor held per card directory, so past the limit (EMFILE) the
    whole prune gave up and nothing was ever removed again."""
    root = Path(lich_env["LICH_HOOK_STATE_DIR"])
    stale_workers(root, 300)
    run_command("ulimit -n 64 && exec lich-hook SessionStart claude", {"session_id": SID}, lich_env)
    records = wait_for_log(lich_env, 2)
    assert records[0]["outcome"] == "taken"
    assert pruned(records) == 600  # 300 workers and their 300 card directories
    assert list((root / "workers").iterdir()) == []


def card_env(tmp: Path, fake: FakeLich) -> dict[str, str]:
    return base_env(
        tmp,
        **fake.env(),
        LICH_SESSION_ID="card-1",
        LICH_SUBAGENT_DEPTH="0",
        CLAUDE_CODE_SESSION_ATTENDED="1",
        CLAUDE_CODE_ENTRYPOINT="cli",
    )


def test_the_agent_verdict_does_not_wait_for_the_prune(tmp_path: Path) -> None:
    """Before: the prune ran inside the hook, before its verdict was out (+0.2 s with
    10,000 stale records, +1 s with 50,000)."""
    fake = FakeLich(tmp_path)
    env = card_env(tmp_path, fake)
    root = Path(env["LICH_HOOK_STATE_DIR"])
    stale_workers(root, 500)
    fake.script(open={"json": session("pending", name="w-new")})
    project = tmp_path / "project"
    project.mkdir()
    ran = run_hook("PreToolUse claude", agent_payload(project), env)
    assert reason(ran.stdout).startswith("Not an error:")
    hook, prune_line = wait_for_log(env, 2)
    assert hook["decision"] != "prune" and prune_line["event"] == "prune"
    assert prune_line["pid"] != hook["pid"]  # a process of its own, detached
    assert pruned([hook, prune_line]) == 1000
    assert [p.name for p in (root / "workers" / "card-1").iterdir()] == ["w-new.json"]


def test_the_status_line_does_not_wait_for_the_prune(tmp_path: Path) -> None:
    """The status line's check stamp is a record too: its prune runs after the line is out."""
    fake = FakeLich(tmp_path)
    env = card_env(tmp_path, fake)
    root = Path(env["LICH_HOOK_STATE_DIR"])
    card = root / "workers" / "card-1"
    card.mkdir(parents=True, mode=0o700)
    (card / "w-a.json").write_text(json.dumps({"name": "w-a", "when": time.time()}))
    stale_workers(root, 500)
    fake.script(sessions={"json": [{"name": "w-a", "state": "running", "id": "s"}]})
    ran = run_hook("status-line", {"session_id": SID}, env)
    assert ran.stdout == b"lich: 1 worker\n"
    [prune_line] = wait_for_log(env, 1)  # the status line writes no line of its own
    assert prune_line["event"] == "prune" and prune_line["removed"] == 1000
    assert sorted(p.name for p in card.iterdir()) == [".checked", "w-a.json"]


def test_future_dated_records_do_not_push_out_the_one_just_written(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    """Before: 200 records dated a year ahead were "the newest", so the prune deleted the
    record the run had just written, and the conversation reported again after every prune."""
    root = Path(lich_env["LICH_HOOK_STATE_DIR"])
    reported = root / "reported"
    reported.mkdir(parents=True, mode=0o700)
    ahead = time.time() + 365 * DAY
    for i in range(REPORTED_MAX):
        record = reported / f"future-{i:04d}"
        record.write_text(f"crush\nconv-{i}")
        os.utime(record, (ahead, ahead))
    crush = {"session_id": SID, "tool_name": "bash"}
    run_hook("PreToolUse crush", crush, lich_env)
    records = wait_for_log(lich_env, 2)
    assert records[0]["outcome"] == "taken"
    assert pruned(records) == 1  # one of the future-dated ones: the count holds
    assert (reported / "card-1").is_file()
    assert len(list(reported.iterdir())) == REPORTED_MAX
    # The next tool call finds its record: no second report.
    run_hook("PreToolUse crush", crush, lich_env)
    assert wait_for_log(lich_env, 3)[-1]["decision"] == "already-reported"


def test_a_future_marker_does_not_stop_pruning(lich: StandIn, lich_env: dict[str, str]) -> None:
    """A marker dated ahead (the clock jumped back) counts as "long ago", never as "just now"."""
    root = Path(lich_env["LICH_HOOK_STATE_DIR"])
    stale_workers(root, 5)
    marker = root / ".pruned"
    marker.write_text("")
    age(marker, -30 * DAY)
    run_hook("SessionStart claude", {"session_id": SID}, lich_env)
    records = wait_for_log(lich_env, 2)
    assert pruned(records) == 10
    assert [p.name for p in files(root)] == [".pruned", "card-1"]
    sender = records[0]["pid"]
    assert isinstance(sender, int) and wait_until(lambda: not running(sender))
