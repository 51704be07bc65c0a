"""session-start per harness (docs/session-start.md): what is reported, and when.

claude and codex report on every SessionStart; Antigravity (PreInvocation,
before every model call) and Crush (PreToolUse, before every tool call) report
an id only when it differs from the last one lich took (204) for this card, so
an id that failed to report is tried again on the next call.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import CONV, REPORTING, SID, payload
from tests.support.contract_check import assert_client_body
from tests.support.listeners import Hanging, Status, closed_port
from tests.support.runner import base_env, run_hook, wait_for_log


def _decisions(env: dict[str, str], count: int) -> list[object]:
    records = wait_for_log(env, count)
    assert len(records) == count, records
    return [record["decision"] for record in records]


@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact", "fork"])
def test_claude_reports_every_session_start(
    source: str, lich: StandIn, lich_env: dict[str, str]
) -> None:
    """Every conversation start reports, even one lich already holds: a Claude Code run in
    the same card may have replaced it. (Two runs of one firing, the plugin's and an
    `install` entry's, report once: tests/registrations/test_claims.py.)"""
    for n, conversation in enumerate((SID, CONV, SID), start=1):
        body = {"session_id": conversation, "source": source, "hook_event_name": "SessionStart"}
        ran = run_hook("SessionStart claude", body, lich_env)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
        lich.wait(n)
    assert [r.status for r in lich.received] == [204, 204, 204]
    for request, conversation in zip(lich.received, (SID, CONV, SID), strict=True):
        assert assert_client_body("session-start", request.body) == {
            "session_id": "card-1",
            "provider_session_id": conversation,
            "provider": "claude",
        }


def test_codex_reports_every_session_start(lich: StandIn, lich_env: dict[str, str]) -> None:
    body = payload("codex", "SessionStart") | {"model": "gpt-5.5", "permission_mode": "default"}
    run_hook("SessionStart codex", body, lich_env)
    lich.wait(1)
    run_hook("SessionStart codex", body, lich_env)
    requests = lich.wait(2)
    assert [r.accepted for r in requests] == [
        {"session_id": "card-1", "provider_session_id": SID, "provider": "codex"}
    ] * 2


@pytest.mark.parametrize("provider", ["antigravity", "crush"])
def test_deduped_harness_reports_once_per_id(
    provider: str, lich: StandIn, lich_env: dict[str, str], tmp_path: Path
) -> None:
    event = REPORTING[provider]
    args = f"{event} {provider}"
    for n in range(1, 4):
        ran = run_hook(args, payload(provider, event), lich_env)
        assert ran.returncode == 0
        wait_for_log(lich_env, n)  # the harness's next call comes after this one's 204
    assert _decisions(lich_env, 3) == ["report", "already-reported", "already-reported"]
    assert [r.accepted for r in lich.received] == [
        {"session_id": "card-1", "provider_session_id": SID, "provider": provider}
    ]
    # A different id (a new conversation, or back to an older one) reports again.
    run_hook(args, payload(provider, event, CONV), lich_env)
    wait_for_log(lich_env, 4)
    run_hook(args, payload(provider, event, SID), lich_env)
    wait_for_log(lich_env, 5)
    assert [r.accepted["provider_session_id"] for r in lich.received if r.accepted] == [
        SID,
        CONV,
        SID,
    ]
    # Another card in the same state dir has its own memory.
    other = {**lich_env, "LICH_SESSION_ID": "card-2"}
    run_hook(args, payload(provider, event, SID), other)
    assert _decisions(lich_env, 6)[-1] == "report"
    assert lich.received[-1].accepted == {
        "session_id": "card-2",
        "provider_session_id": SID,
        "provider": provider,
    }


@pytest.mark.parametrize("provider", ["antigravity", "crush"])
@pytest.mark.parametrize("failure", ["500", "400", "401", "down"])
def test_an_id_that_failed_to_report_is_tried_again(
    provider: str, failure: str, lich: StandIn, tmp_path: Path
) -> None:
    event = REPORTING[provider]
    args = f"{event} {provider}"
    good = base_env(tmp_path, **lich.env("card-1"))
    if failure == "down":
        bad = {**good, "LICH_PORT": str(closed_port())}
        run_hook(args, payload(provider, event), bad)
        [record] = wait_for_log(good, 1)
        assert record["outcome"] == "failed"
    else:
        with Status(int(failure)) as refusing:
            bad = {**good, "LICH_PORT": str(refusing.port)}
            run_hook(args, payload(provider, event), bad)
            [record] = wait_for_log(good, 1)
            assert refusing.connections == 1
        assert (record["outcome"], record["status"]) == ("refused", int(failure))
    run_hook(args, payload(provider, event), good)
    run_hook_after = wait_for_log(good, 2)
    assert run_hook_after[-1]["decision"] == "report"
    assert run_hook_after[-1]["outcome"] == "taken"
    run_hook(args, payload(provider, event), good)
    assert _decisions(good, 3)[-1] == "already-reported"
    assert len(lich.received) == 1


@pytest.mark.parametrize("provider", sorted(REPORTING))
def test_both_spellings_on_every_harness_conversation_id_wins(
    provider: str, lich: StandIn, lich_env: dict[str, str]
) -> None:
    event = REPORTING[provider]
    cases = [
        ({"conversationId": CONV, "session_id": SID}, CONV),
        ({"session_id": SID, "conversationId": CONV}, CONV),
        ({"conversationId": SID}, SID),
        ({"session_id": CONV}, CONV),
    ]
    for n, (body, _) in enumerate(cases, start=1):
        card_env = {**lich_env, "LICH_SESSION_ID": f"card-{n}"}
        run_hook(f"{event} {provider}", body, card_env)
        lich.wait(n)
    got = sorted(str((r.accepted or {}).get("session_id", "")) for r in lich.received)
    assert len(got) == len(cases)
    by_card = {r.accepted["session_id"]: r.accepted for r in lich.received if r.accepted}
    for n, (_, expected) in enumerate(cases, start=1):
        assert by_card[f"card-{n}"] == {
            "session_id": f"card-{n}",
            "provider_session_id": expected,
            "provider": provider,
        }


@pytest.mark.parametrize("provider", sorted(REPORTING))
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"session_id": ""},
        {"conversationId": ""},
        {"session_id": None},
        {"session_id": 42},
        {"conversationId": ["x"]},
        {"session_id": {"id": "x"}},
        {"sessionId": SID},
    ],
    ids=["none", "empty", "empty-conv", "null", "int", "list", "object", "camel-session"],
)
def test_missing_empty_or_non_string_id_sends_nothing(
    provider: str, body: dict[str, object], lich_env: dict[str, str], lich: StandIn
) -> None:
    event = REPORTING[provider]
    ran = run_hook(f"{event} {provider}", body, lich_env)
    assert ran.returncode == 0 and ran.stderr == b""
    [record] = wait_for_log(lich_env, 1)
    assert record["decision"] == "no-session-id"
    assert "outcome" not in record  # no send was started
    assert lich.received == []


@pytest.mark.parametrize("provider", ["opencode", "omp", "cursor", "kiro"])
def test_module_harness_ids_report_under_their_own_provider(
    provider: str, lich: StandIn, lich_env: dict[str, str]
) -> None:
    run_hook(f"SessionStart {provider}", {"session_id": SID}, lich_env)
    [request] = lich.wait(1)
    assert request.status == 204
    assert assert_client_body("session-start", request.body)["provider"] == provider


def test_other_events_of_reporting_harnesses_send_nothing(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    runs = [
        ("PostInvocation antigravity", {"conversationId": CONV}),
        ("PreToolUse antigravity", {"conversationId": CONV, "tool_name": "run_command"}),
        ("Stop antigravity", {"conversationId": CONV}),
        ("PreToolUse codex", {"session_id": SID, "tool_name": "Bash"}),
        ("Stop codex", {"session_id": SID}),
        ("PreCompact crush", {"session_id": SID}),
    ]
    for args, body in runs:
        assert run_hook(args, body, lich_env).returncode == 0
    records = wait_for_log(lich_env, len(runs))
    assert [r["decision"] for r in records] == ["no-job"] * len(runs)
    assert lich.received == []


@pytest.mark.parametrize("provider", ["antigravity", "crush"])
@pytest.mark.parametrize("other", ["claude", "codex"])
def test_a_report_from_another_harness_in_the_card_is_not_forgotten(
    provider: str, other: str, lich: StandIn, lich_env: dict[str, str]
) -> None:
    """The last id lich took for the card may come from a SessionStart: a deduped
    harness resuming its old conversation in that card afterwards reports again,
    or lich keeps the other harness's id (and icon, and resume command)."""
    event = REPORTING[provider]
    run_hook(f"{event} {provider}", payload(provider, event, SID), lich_env)
    wait_for_log(lich_env, 1)
    run_hook(f"SessionStart {other}", payload(other, "SessionStart", CONV), lich_env)
    wait_for_log(lich_env, 2)
    run_hook(f"{event} {provider}", payload(provider, event, SID), lich_env)
    assert _decisions(lich_env, 3) == ["report", "report", "report"]
    providers = [(r.accepted or {}).get("provider") for r in lich.received]
    assert providers == [provider, other, provider]


@pytest.mark.parametrize("provider", sorted(REPORTING))
def test_a_report_whose_answer_was_lost_leaves_no_stale_record(
    provider: str, lich: StandIn, tmp_path: Path
) -> None:
    """lich may have stored an id whose 204 never came back (here: a listener that
    reads the report and never answers). Nobody knows which id lich holds then, so
    the next call of a deduped harness reports its id again instead of trusting
    the record of an earlier report."""
    event = REPORTING[provider]
    good = base_env(tmp_path, **lich.env("card-1"))
    run_hook(f"{event} {provider}", payload(provider, event, SID), good)
    wait_for_log(good, 1)
    with Hanging() as hanging:
        lost = {**good, "LICH_PORT": str(hanging.port)}
        run_hook("SessionStart claude", payload("claude", "SessionStart", CONV), lost)
        [_, record] = wait_for_log(good, 2)
    assert record["status"] is None and record["outcome"] in ("failed", "deadline")
    run_hook(f"{event} {provider}", payload(provider, event, SID), good)
    assert _decisions(good, 3) == ["report", "report", "report"]
    assert len(lich.received) == 2


def test_outside_lich_sends_nothing(env: dict[str, str]) -> None:
    # no LICH_* variable at all: the harness's default stdout, no report, one log line
    ran = run_hook("PreInvocation antigravity", {"conversationId": CONV}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"{}", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "outside-lich"
    assert "outcome" not in record
