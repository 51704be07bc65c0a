"""`lich-hook <event> [<provider>]` (docs/architecture.md): every accepted spelling names the
same event, an omitted provider is claude, unknown ones are quiet no-ops."""

from __future__ import annotations

import pytest

from lich_hooks.base.harnesses import ROUTES
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support.contract_check import assert_client_body
from tests.support.runner import run_hook, wait_for_log


@pytest.mark.parametrize(
    "event",
    [
        "SessionStart",
        "sessionstart",
        "session-start",
        "session_start",
        "SESSION_START",
        "Session-Start",
    ],
)
def test_event_spellings(event: str, lich: StandIn, lich_env: dict[str, str]) -> None:
    ran = run_hook(f"{event} claude", {"session_id": SID}, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.accepted == {
        "session_id": "card-1",
        "provider_session_id": SID,
        "provider": "claude",
    }


@pytest.mark.parametrize(
    "event", ["PreInvocation", "preinvocation", "pre-invocation", "PRE_INVOCATION"]
)
def test_antigravity_event_spellings_keep_its_stdout(
    event: str, lich: StandIn, lich_env: dict[str, str]
) -> None:
    ran = run_hook(f"{event} antigravity", {"conversationId": SID}, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"{}", b"")
    [request] = lich.wait(1)
    assert request.accepted is not None and request.accepted["provider"] == "antigravity"


def test_provider_omitted_is_claude(lich: StandIn, lich_env: dict[str, str]) -> None:
    ran = run_hook("SessionStart", {"session_id": SID}, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert assert_client_body("session-start", request.body)["provider"] == "claude"


@pytest.mark.parametrize("provider", list(ROUTES))
def test_every_registered_provider(provider: str, lich: StandIn, lich_env: dict[str, str]) -> None:
    ran = run_hook(f"SessionStart {provider.upper()}", {"session_id": SID}, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.status == 204
    assert assert_client_body("session-start", request.body)["provider"] == provider


@pytest.mark.parametrize(
    ("args", "stdout", "decision"),
    [
        ("SessionStarted claude", b"", "unknown-event"),
        ("'' claude", b"", "unknown-event"),
        ("Session.Start claude", b"", "unknown-event"),
        ("NoSuchEvent antigravity", b"", "unknown-event"),
        ("SessionStart aider", b"", "unknown-provider"),
        ("PreInvocation gemini", b"", "unknown-provider"),
        ("SessionStart ''", b"", "unknown-provider"),
    ],
)
def test_unknown_event_or_provider_is_a_quiet_no_op(
    args: str, stdout: bytes, decision: str, lich: StandIn, lich_env: dict[str, str]
) -> None:
    ran = run_hook(args, {"session_id": SID, "conversationId": SID}, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, stdout, b"")
    [record] = wait_for_log(lich_env, 1)
    assert record["decision"] == decision
    assert lich.received == []


def test_extra_arguments_are_ignored(lich: StandIn, lich_env: dict[str, str]) -> None:
    ran = run_hook("SessionStart codex --future-flag x", {"session_id": SID}, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.accepted is not None and request.accepted["provider"] == "codex"
