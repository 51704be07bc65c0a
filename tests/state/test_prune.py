"""The state stays bounded (docs/troubleshooting.md): records are pruned by age
and count when a record is written, at most once an hour, never on a path
that only reads."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lich_hooks.hook.state import prune, session_record
from lich_hooks.human.standin.server import StandIn
from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session
from tests.spine.helpers import SID
from tests.support.listeners import wait_until
from tests.support.runner import base_env, run_hook, wait_for_log

DAY = 86400.0
# The newest `reported` records kept, from the table.
[REPORTED_MAX] = [keep for name, _, keep, _, _ in prune.RULES if name == "reported"]


def files(root: Path) -> list[Path]:
    """Every record but the claims (hook/claim.py: one per report, pruned like the others)."""
    return [p for p in root.rglob("*") if not p.is_dir() and p.parent.name != "claims"]


def age(path: Path, seconds: float) -> None:
    when = time.time() - seconds
    os.utime(path, (when, when))


def seed(root: Path, cards: int, workers_per_card: int, days_old: float) -> None:
    """What months of use leave: a record per card, workers nobody stopped."""
    reported = root / "reported"
    reported.mkdir(parents=True, exist_ok=True, mode=0o700)
    for i in range(cards):
        record = reported / f"old-card-{i:05d}"
        record.write_text(f"crush\nconv-{i}")
        age(record, days_old * DAY)
    for i in range(cards if workers_per_card else 0):
        card = root / "workers" / f"wcard-{i:05d}"
        card.mkdir(parents=True, exist_ok=True, mode=0o700)
        for j in range(workers_per_card):
            worker = card / f"w-{i}-{j}.json"
            worker.write_text(json.dumps({"name": f"w-{i}-{j}", "when": 0}))
            age(worker, days_old * DAY)
        (card / ".checked").write_text("0.0")
        age(card / ".checked", days_old * DAY)
        age(card, days_old * DAY)
    sending = root / "sending"
    sending.mkdir(exist_ok=True, mode=0o700)
    claim = sending / "old-card-00000.0123456789abcdef"
    claim.write_text("1.0")
    age(claim, 600)
    stray = reported / ".old-card-00001.4242.deadbeef"  # a writer killed mid-rename
    stray.write_text("half")
    age(stray, days_old * DAY)


def report(env: dict[str, str], count: int) -> list[dict[str, object]]:
    # a conversation of its own each time: one firing is reported once (hook/claim.py)
    run_hook("SessionStart claude", {"session_id": f"{SID[:-2]}{count:02d}"}, env)
    return wait_for_log(env, count)


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def pruned(records: list[dict[str, object]]) -> int:
    """What the prune that a run started removed: its log line (event `prune`), which
    it writes after the run's own line, off the harness's wait."""
    [line] = [record for record in records if record.get("event") == "prune"]
    assert records[-1] is line
    removed = line["removed"]
    assert isinstance(removed, int)
    return removed


def test_months_of_cards_and_workers_are_pruned_when_a_record_is_written(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    root = Path(lich_env["LICH_HOOK_STATE_DIR"])
    seed(root, cards=200, workers_per_card=3, days_old=60)
    assert len(files(root)) > 600
    records = report(lich_env, 2)
    assert records[0]["outcome"] == "taken"
    assert pruned(records) > 600
    left = files(root)
    assert sorted(str(p.relative_to(root)) for p in left) == [
        ".pruned",
        "reported/card-1",
    ]
    assert not list((root / "workers").iterdir())  # empty card directories went too


def test_the_newest_records_are_kept_up_to_the_count(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    root = Path(lich_env["LICH_HOOK_STATE_DIR"])
    seed(root, cards=REPORTED_MAX + 150, workers_per_card=0, days_old=1)
    pruned(report(lich_env, 2))
    kept = {p.name for p in (root / "reported").iterdir()}
    assert len(kept) == REPORTED_MAX
    assert "card-1" in kept  # the one just written is the newest
    assert "old-card-00000" not in kept


def test_a_worker_still_recent_is_kept_with_its_card(tmp_path: Path) -> None:
    fake = FakeLich(tmp_path)
    env = base_env(
        tmp_path,
        **fake.env(),
        LICH_SESSION_ID="card-1",
        LICH_SUBAGENT_DEPTH="0",
        CLAUDE_CODE_SESSION_ATTENDED="1",
        CLAUDE_CODE_ENTRYPOINT="cli",
    )
    root = Path(env["LICH_HOOK_STATE_DIR"])
    seed(root, cards=20, workers_per_card=2, days_old=30)
    fake.script(open={"json": session("pending", name="w-new")})
    project = tmp_path / "project"
    project.mkdir()
    ran = run_hook("PreToolUse claude", agent_payload(project), env)
    assert reason(ran.stdout).startswith("Not an error:")
    pruned(wait_for_log(env, 2))  # the verdict came first; the pruner, detached, after
    assert sorted(p.name for p in (root / "workers").iterdir()) == ["card-1"]
    assert [p.name for p in (root / "workers" / "card-1").iterdir()] == ["w-new.json"]


def test_pruning_is_amortised_and_never_on_a_reading_path(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    root = Path(lich_env["LICH_HOOK_STATE_DIR"])
    crush = {"session_id": SID, "tool_name": "bash"}
    run_hook("PreToolUse crush", crush, lich_env)
    [first] = wait_for_log(lich_env, 1)  # a first record: the first prune, on an empty directory
    first_sender = first["pid"]
    assert isinstance(first_sender, int)
    assert wait_until(lambda: not running(first_sender))  # its prune runs after its log line
    seed(root, cards=50, workers_per_card=1, days_old=60)
    before = len(files(root))
    # The no-op path only reads.
    run_hook("PreToolUse crush", crush, lich_env)
    assert wait_for_log(lich_env, 2)[-1]["decision"] == "already-reported"
    # A record written within the hour after a prune does not prune again.
    third_sender = report(lich_env, 3)[-1]["pid"]
    assert isinstance(third_sender, int)
    assert wait_until(lambda: not running(third_sender))  # its prune looks after its log line
    assert len(files(root)) == before
    # An hour later it does.
    age(root / prune.PRUNE_MARKER, prune.PRUNE_EVERY + 1)
    pruned(report(lich_env, 5))
    assert len(files(root)) == 2


def test_prune_never_follows_a_symlink_out(tmp_path: Path) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.mkdir()
    old = victim / "old-file"
    old.write_text("keep me")
    age(old, 365 * DAY)
    (root / "reported").symlink_to(victim)
    (root / "workers").mkdir(mode=0o700)
    (root / "workers" / "card-x").symlink_to(victim)
    environ = {"LICH_HOOK_STATE_DIR": str(root)}
    prune.maybe_prune(environ, time.time())
    assert old.read_text() == "keep me"


def test_every_record_directory_has_its_row_and_every_row_a_writer() -> None:
    """The table is data on the state floor: the modules that write records name their
    directory, and nothing else decides what is kept."""
    from lich_hooks.hook import claim
    from lich_hooks.hook.jobs.agent_cards import record
    from lich_hooks.hook.shared import codex
    from lich_hooks.hook.shared.codex import nudge, refused
    from lich_hooks.hook.state import stops
    from lich_hooks.human.settings import install_record

    writers = {
        session_record.REPORTED[0],
        session_record.SENDING[0],
        session_record.SERVED[0],
        session_record.MARKS[0],
        record.WORKERS,
        install_record.INSTALLED[0],
        "codex-daemon",  # no release writes it any more: emptied
        nudge.MARKS[0],
        claim.PARTS[0],
        stops.PARTS[0],
        refused.PARTS[0],
        codex.TIES[0],
    }
    assert {name for name, *_ in prune.RULES} == writers
    assert [spared for name, *_, spared in prune.RULES if name == record.WORKERS] == [
        (record.CHECKED,)
    ]


def test_the_old_codex_daemon_record_is_emptied(tmp_path: Path) -> None:
    """Releases before the Codex rule stopped needing memory wrote `codex-daemon/` marks."""
    root = tmp_path / "state"
    (root / "codex-daemon").mkdir(parents=True, mode=0o700)
    old = root / "codex-daemon" / "m-abc-123-456"
    old.write_bytes(b"")
    prune.maybe_prune({"LICH_HOOK_STATE_DIR": str(root)}, time.time())
    assert not old.exists()
