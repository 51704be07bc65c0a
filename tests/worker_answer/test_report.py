"""Claude Code `Stop` in a lich worker, through the real console script (docs/worker-answer.md).

Every row of docs/worker-answer.md's table: what lich receives (each body checked against
the contract vectors both ways) and what Claude Code sees (exit 0, empty
stdout, silent stderr).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import Ran, base_env, run_hook, wait_for_log

CARD = "card-w"
# A worker card's terminal as lich 0.20 opens it, under an interactive Claude Code.
WORKER = {"LICH_SUBAGENT_DEPTH": "1", "CLAUDE_CODE_SESSION_ATTENDED": "1"}


def stop_payload(**fields: object) -> dict[str, object]:
    """A Stop payload as Claude Code 2.1.328 sends it (docs/harnesses.md)."""
    payload: dict[str, object] = {
        "session_id": "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": "/tmp",
        "permission_mode": "auto",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Rewrote docs/cli.md; the tests pass.",
        "background_tasks": [],
        "session_crons": [],
    }
    payload.update(fields)
    return payload


@pytest.fixture
def worker(tmp_path: Path, lich: StandIn) -> dict[str, str]:
    return base_env(tmp_path, **lich.env(CARD), **WORKER)


def stop(
    env: dict[str, str], payload: object, event: str = "Stop"
) -> tuple[Ran, dict[str, object]]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    ran = run_hook(f"{event} claude", raw, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    return ran, record


def answered(lich: StandIn, env: dict[str, str], payload: object) -> dict[str, object]:
    """Run the Stop; exactly one request, taken by lich, vectors satisfied: its body."""
    _, record = stop(env, payload)
    [request] = lich.wait(1)
    assert (request.endpoint, request.status, record["outcome"]) == ("mod/answer", 204, "taken")
    assert request.headers["x-lich-plugin"] == "0.20.0"
    return assert_client_body("mod/answer", request.body)


def nothing_sent(lich: StandIn, record: dict[str, object], decision: str) -> None:
    assert record["decision"] == decision
    assert "outcome" not in record  # no send was attempted
    assert lich.received == []


# -- reported ---------------------------------------------------------------------


def test_last_message_is_the_answer(lich: StandIn, worker: dict[str, str]) -> None:
    assert answered(lich, worker, stop_payload()) == {
        "session_id": CARD,
        "text": "Rewrote docs/cli.md; the tests pass.",
    }


@pytest.mark.parametrize("message", ["", " ", " \n\t", "\u3000\n", "\r\n\r\n"])
def test_blank_message_is_unanswered_blank(
    lich: StandIn, worker: dict[str, str], message: str
) -> None:
    body = answered(lich, worker, stop_payload(last_assistant_message=message))
    assert body == {"session_id": CARD, "unanswered": "blank"}


@pytest.mark.parametrize("message", [42, ["Done."], {"text": "Done."}, True])
def test_a_message_that_is_not_text_is_blank(
    lich: StandIn, worker: dict[str, str], message: object
) -> None:
    body = answered(lich, worker, stop_payload(last_assistant_message=message))
    assert body == {"session_id": CARD, "unanswered": "blank"}


TEXTS = [
    'She said "done" \\ and left',
    "line 1\nline 2\r\n\ttabbed",
    "controls \x00\x01\x1b[31m\x7f",
    "Корректно. 完成了。 تم. ✅ 😀👩‍👩‍👧 é vs é",
    "\u2028\u2029 separators",
    "  leading and trailing whitespace is kept  \n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_text_is_passed_exactly(lich: StandIn, worker: dict[str, str], text: str) -> None:
    body = answered(lich, worker, stop_payload(last_assistant_message=text))
    assert body == {"session_id": CARD, "text": text}


def test_empty_background_list_answers(lich: StandIn, worker: dict[str, str]) -> None:
    body = answered(lich, worker, stop_payload(background_tasks=[]))
    assert body["text"] == "Rewrote docs/cli.md; the tests pass."


@pytest.mark.parametrize("tasks", [None, "", {}, {"id": "x"}, 3])
def test_background_tasks_of_another_type_do_not_hold(
    lich: StandIn, worker: dict[str, str], tasks: object
) -> None:
    body = answered(lich, worker, stop_payload(background_tasks=tasks))
    assert "text" in body


def test_stop_hook_active_still_answers(lich: StandIn, worker: dict[str, str]) -> None:
    """Claude Code continued because a Stop hook blocked; lich keeps the first answer."""
    body = answered(lich, worker, stop_payload(stop_hook_active=True))
    assert "text" in body


@pytest.mark.parametrize("agent_id", [None, ""])
def test_empty_agent_id_is_the_main_loop(
    lich: StandIn, worker: dict[str, str], agent_id: object
) -> None:
    assert "text" in answered(lich, worker, stop_payload(agent_id=agent_id))


def test_long_text_is_cut_and_marked(lich: StandIn, worker: dict[str, str]) -> None:
    text = "word " * 5000  # 25,000 units
    body = answered(lich, worker, stop_payload(last_assistant_message=text))
    assert body["text"] == text[:16_000] + "\n[truncated]"


def test_a_pair_at_the_cut_is_not_split(lich: StandIn, worker: dict[str, str]) -> None:
    text = "a" * 15_999 + "😀" + "tail"
    body = answered(lich, worker, stop_payload(last_assistant_message=text))
    assert body["text"] == "a" * 15_999 + "\n[truncated]"


def test_control_characters_stay_under_64_kib(lich: StandIn, worker: dict[str, str]) -> None:
    """16,000 units of C0 controls would be 96,000 JSON bytes: cut further, still marked."""
    text = "\x01" * 20_000
    stop(worker, stop_payload(last_assistant_message=text))
    [request] = lich.wait(1)
    assert request.status == 204
    assert len(request.body) < 64 * 1024
    sent = assert_client_body("mod/answer", request.body)["text"]
    assert isinstance(sent, str)
    assert sent.endswith("\n[truncated]")
    assert set(sent[: -len("\n[truncated]")]) == {"\x01"}


def test_exactly_16000_units_is_not_cut(lich: StandIn, worker: dict[str, str]) -> None:
    text = "é" * 15_998 + "😀"
    body = answered(lich, worker, stop_payload(last_assistant_message=text))
    assert body["text"] == text


def test_lone_surrogates_become_replacement_characters(
    lich: StandIn, worker: dict[str, str]
) -> None:
    raw = json.dumps(stop_payload(last_assistant_message="PLACEHOLDER")).encode()
    raw = raw.replace(b"PLACEHOLDER", b"ok \\ud800 then \\udfff end \\ud83d\\ude00")
    body = answered(lich, worker, raw)
    assert body["text"] == "ok \ufffd then \ufffd end 😀"


def test_a_lone_surrogate_alone_is_not_blank(lich: StandIn, worker: dict[str, str]) -> None:
    raw = (
        json.dumps(stop_payload(last_assistant_message="X")).encode().replace(b'"X"', b'"\\udc00"')
    )
    assert answered(lich, worker, raw)["text"] == "\ufffd"


@pytest.mark.parametrize("depth", ["1", "2", "7"])
def test_every_depth_above_zero_answers(tmp_path: Path, lich: StandIn, depth: str) -> None:
    env = base_env(
        tmp_path, **lich.env(CARD), LICH_SUBAGENT_DEPTH=depth, CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    assert "text" in answered(lich, env, stop_payload())


def test_older_lich_marks_workers_with_cards_off(tmp_path: Path, lich: StandIn) -> None:
    env = base_env(
        tmp_path, **lich.env(CARD), LICH_SUBAGENT_CARDS="off", CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    assert "text" in answered(lich, env, stop_payload())


# -- not reported -------------------------------------------------------------------


def test_outside_lich_nothing(tmp_path: Path, lich: StandIn) -> None:
    env = base_env(tmp_path, **WORKER)
    _, record = stop(env, stop_payload())
    nothing_sent(lich, record, "outside-lich")


@pytest.mark.parametrize("missing", ["LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID"])
def test_partial_lich_env_nothing(lich: StandIn, worker: dict[str, str], missing: str) -> None:
    del worker[missing]
    _, record = stop(worker, stop_payload())
    nothing_sent(lich, record, "outside-lich")


def test_not_interactive_nothing(lich: StandIn, worker: dict[str, str]) -> None:
    worker["CLAUDE_CODE_SESSION_ATTENDED"] = "0"
    _, record = stop(worker, stop_payload())
    nothing_sent(lich, record, "not-interactive")
    assert record["interactive"] == "CLAUDE_CODE_SESSION_ATTENDED=0"


def test_sdk_entrypoint_nothing(lich: StandIn, worker: dict[str, str]) -> None:
    del worker["CLAUDE_CODE_SESSION_ATTENDED"]
    worker["CLAUDE_CODE_ENTRYPOINT"] = "sdk-cli"
    _, record = stop(worker, stop_payload())
    nothing_sent(lich, record, "not-interactive")


@pytest.mark.parametrize("agent_id", ["a1b2c3", "agent-general-purpose-1", 7])
def test_subagent_stop_nothing(lich: StandIn, worker: dict[str, str], agent_id: object) -> None:
    payload = stop_payload(agent_id=agent_id, agent_type="general-purpose")
    _, record = stop(worker, payload)
    nothing_sent(lich, record, "subagent-stop")


def test_background_work_nothing(lich: StandIn, worker: dict[str, str]) -> None:
    task = {
        "id": "t1",
        "type": "subagent",
        "status": "running",
        "description": "Run the suite",
        "agent_type": "general-purpose",
    }
    _, record = stop(worker, stop_payload(background_tasks=[task]))
    nothing_sent(lich, record, "background-work")
    assert record["background_tasks"] == 1


def test_background_work_with_a_blank_message_nothing(
    lich: StandIn, worker: dict[str, str]
) -> None:
    """A blank turn reports only when its own Stop lists nothing running (the seed)."""
    payload = stop_payload(last_assistant_message="", background_tasks=[{"id": "b"}])
    _, record = stop(worker, payload)
    nothing_sent(lich, record, "background-work")


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[1, 2]", b'"a string"', b"\xff\xfe{}", b'{"a": 1', b"null"],
    ids=["empty", "text", "array", "string", "bad-utf8", "truncated", "null"],
)
def test_bad_input_nothing(lich: StandIn, worker: dict[str, str], raw: bytes) -> None:
    _, record = stop(worker, raw)
    nothing_sent(lich, record, "bad-input")


def test_multi_megabyte_payload_nothing(lich: StandIn, worker: dict[str, str]) -> None:
    raw = json.dumps(stop_payload(last_assistant_message="x" * (9 << 20))).encode()
    _, record = stop(worker, raw)
    nothing_sent(lich, record, "bad-input")


def test_stop_failure_is_not_routed(lich: StandIn, worker: dict[str, str]) -> None:
    """A refusal or an API error ends the turn through StopFailure: nothing
    (docs/worker-answer.md)."""
    payload: dict[str, object] = {
        "session_id": "s",
        "hook_event_name": "StopFailure",
        "error": "invalid_request",
        "last_assistant_message": "I can't help with that.",
    }
    for spelling in ("StopFailure", "stop-failure", "stop_failure", "STOPFAILURE"):
        ran = run_hook(f"{spelling} claude", payload, worker)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    records = wait_for_log(worker, 4)
    assert [r["decision"] for r in records] == ["no-job"] * 4
    assert [r["event"] for r in records] == ["StopFailure"] * 4
    assert lich.received == []


def test_subagent_stop_event_is_not_routed(lich: StandIn, worker: dict[str, str]) -> None:
    _, record = stop(worker, stop_payload(agent_id="a1"), event="SubagentStop")
    nothing_sent(lich, record, "no-job")


@pytest.mark.parametrize("provider", ["codex", "antigravity", "crush"])
def test_stop_of_other_harnesses_does_not_answer(
    lich: StandIn, worker: dict[str, str], provider: str
) -> None:
    ran = run_hook(f"Stop {provider}", stop_payload(), worker)
    assert ran.returncode == 0
    [record] = wait_for_log(worker, 1)
    assert record["decision"] == "no-job"
    assert lich.received == []


# -- faults: the harness sees the same thing -------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_lich_down_changes_nothing(tmp_path: Path) -> None:
    env = base_env(
        tmp_path,
        LICH_PORT=str(_closed_port()),
        LICH_TOKEN="a-token-that-is-long-enough",
        LICH_SESSION_ID=CARD,
        **WORKER,
    )
    _, record = stop(env, stop_payload())
    assert record["decision"] == "answer"
    assert record["outcome"] == "failed"


def test_bad_token_is_refused_and_changes_nothing(lich: StandIn, worker: dict[str, str]) -> None:
    worker["LICH_TOKEN"] = "wrong"
    _, record = stop(worker, stop_payload())
    [request] = lich.wait(1)
    assert (request.status, record["outcome"], record["status"]) == (401, "refused", 401)


def test_debug_names_the_decision(lich: StandIn, worker: dict[str, str]) -> None:
    worker["LICH_HOOK_DEBUG"] = "1"
    ran = run_hook("Stop claude", stop_payload(), worker)
    assert (ran.returncode, ran.stdout) == (0, b"")
    assert b"Stop claude: answer" in ran.stderr
    assert lich.token.encode() not in ran.stderr
    lich.wait(1)
