"""A report in flight counts as taken (docs/session-start.md).

Crush fires several tool calls within the ~100 ms a report takes to land, in
parallel or back to back; each used to report. Now the first call claims the
report for its card and id, the others see the claim and send nothing, and
the claim ends with the sender: a 204 leaves the record, a failure leaves
nothing so the next call reports again.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from lich_hooks.hook.state import session_record
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support.listeners import Hanging
from tests.support.runner import base_env, run_hook, run_together, wait_for_log

CRUSH = "PreToolUse crush"
PAYLOAD = b'{"session_id": "%s", "tool_name": "bash"}' % SID.encode()


def decisions(env: dict[str, str], count: int) -> list[str]:
    return [str(r["decision"]) for r in wait_for_log(env, count, timeout=15)]


def test_fifty_parallel_calls_of_one_conversation_report_once(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    for ran in run_together(CRUSH, [PAYLOAD] * 50, lich_env):
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    seen = decisions(lich_env, 50)
    assert len(seen) == 50
    assert seen.count("report") == 1, sorted(seen)
    assert set(seen) <= {"report", "report-in-flight", "already-reported"}
    assert [r.status for r in lich.received] == [204]
    run_hook(CRUSH, PAYLOAD, lich_env)
    assert decisions(lich_env, 51)[-1] == "already-reported"
    assert len(lich.received) == 1


def test_four_back_to_back_calls_report_once(lich: StandIn, lich_env: dict[str, str]) -> None:
    for _ in range(4):
        ran = run_hook(CRUSH, PAYLOAD, lich_env)  # no wait for the report: as Crush does
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    seen = decisions(lich_env, 4)
    assert seen.count("report") == 1, seen
    assert len(lich.received) == 1


def test_a_failing_report_in_flight_is_taken_until_it_ends(lich: StandIn, tmp_path: Path) -> None:
    good = base_env(tmp_path, **lich.env("card-1"))
    with Hanging() as hanging:
        lost = {**good, "LICH_PORT": str(hanging.port)}
        run_hook(CRUSH, PAYLOAD, lost)
        hanging.wait(1)
        run_hook(CRUSH, PAYLOAD, good)  # the first is still in flight
        first, second = wait_for_log(good, 2, timeout=10)
    assert (first["decision"], second["decision"]) == ("report-in-flight", "report")
    assert second["outcome"] in ("failed", "deadline")
    # It ended without a 204: the next call reports again, and that one sticks.
    run_hook(CRUSH, PAYLOAD, good)
    run_hook(CRUSH, PAYLOAD, good)
    # (A sender writes its run's log line after lich answered: order by completion.)
    assert sorted(decisions(good, 4)[2:]) in (
        ["already-reported", "report"],
        ["report", "report-in-flight"],
    )
    assert len(lich.received) == 1
    assert not list((Path(good["LICH_HOOK_STATE_DIR"]) / "sending").iterdir())


def test_a_claim_left_by_a_killed_sender_goes_stale(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    environ = {"LICH_HOOK_STATE_DIR": lich_env["LICH_HOOK_STATE_DIR"]}
    assert session_record.claim(environ, "card-1", f"crush\n{SID}", time.time()) is True
    run_hook(CRUSH, PAYLOAD, lich_env)
    assert decisions(lich_env, 1) == ["report-in-flight"]
    sending = Path(lich_env["LICH_HOOK_STATE_DIR"]) / "sending"
    [claim] = sending.iterdir()
    old = time.time() - session_record.CLAIM_SECONDS - 1
    os.utime(claim, (old, old))
    run_hook(CRUSH, PAYLOAD, lich_env)
    assert decisions(lich_env, 2) == ["report-in-flight", "report"]
    assert len(lich.wait(1)) == 1


def test_another_id_in_the_same_card_is_not_held_back(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    run_hook(CRUSH, PAYLOAD, lich_env)
    run_hook(CRUSH, b'{"session_id": "other-conversation"}', lich_env)
    assert decisions(lich_env, 2) == ["report", "report"]
    assert len(lich.wait(2)) == 2


def test_a_sender_that_outlived_its_claim_sends_nothing(
    lich: StandIn, lich_env: dict[str, str], tmp_path: Path
) -> None:
    """A sender that waited past its claim's send window (a child starved of CPU) may find
    its report taken over: it sends nothing and still ends its claim (docs/session-start.md)."""
    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.base.runlog import RunLog
    from lich_hooks.hook import run
    from lich_hooks.hook.outcome import Outcome

    ended = tmp_path / "ended"
    for late, sent in ((True, 0), (False, 1)):
        outcome = Outcome(
            "report",
            endpoint="session-start",
            body={"sessionId": "card-1", "claudeSessionId": SID, "provider": "crush"},
            on_end=ended.touch,
            send_by=time.time() + (-1.0 if late else session_record.SEND_SECONDS),
        )
        log = RunLog(lich_env)
        run._send_detached(LichEnv(lich_env), outcome, log, lich_env)
        [record] = wait_for_log(lich_env, 1, timeout=15)[-1:]
        assert record["error"] == ("claim-expired" if late else None), record
        assert ended.exists() and len(lich.received) == sent
        ended.unlink()
        Path(lich_env["LICH_HOOK_LOG"]).unlink()
