from __future__ import annotations

from lich_hooks.standin.server import StandIn
from tests.support.runner import run_hook, wait_for_log

SID = "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10"


def test_claude_session_start_reports(lich: StandIn, lich_env: dict[str, str]) -> None:
    ran = run_hook("SessionStart claude", {"session_id": SID, "source": "startup"}, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.status == 204
    assert request.accepted == {
        "session_id": "card-1",
        "provider_session_id": SID,
        "provider": "claude",
    }


def test_crush_reports_once_per_id(lich: StandIn, lich_env: dict[str, str]) -> None:
    payload = {"session_id": SID, "tool_name": "bash"}
    run_hook("PreToolUse crush", payload, lich_env)
    lich.wait(1)
    wait_for_log(lich_env, 1)
    run_hook("PreToolUse crush", payload, lich_env)
    records = wait_for_log(lich_env, 2)
    assert [r["decision"] for r in records] == ["report", "already-reported"]
    assert len(lich.received) == 1


def test_outside_lich_sends_nothing(env: dict[str, str]) -> None:
    ran = run_hook("PreInvocation antigravity", {"conversationId": SID}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"{}", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "outside-lich"
