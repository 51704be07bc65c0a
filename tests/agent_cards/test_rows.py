"""docs/agent-cards.md, row by row, through the real console script and a stand-in lich."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session, toast
from tests.support.runner import Ran, run_hook, wait_for_log

HOOK = "PreToolUse claude"


@pytest.fixture(autouse=True)
def _pending(fake: FakeLich) -> None:
    fake.script(open={"json": session("pending")})


def native(ran: Ran, fake: FakeLich, env: dict[str, str], reason: str) -> None:
    """No verdict, no lich call, and the row that said so.

    A crash in the hook also ends with empty stdout and no lich call, so only
    the logged decision tells "this row stayed native" from "nothing ran".
    """
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert fake.calls() == []
    assert decision(env) == f"native:{reason}"


def decision(env: dict[str, str]) -> object:
    """The decision this test's one hook run logged."""
    [record] = wait_for_log(env, 1)
    return record["decision"]


def taken(stdout: bytes, fake: FakeLich) -> bool:
    return reason(stdout).startswith("Not an error") and fake.argvs()[0][0] == "open"


@pytest.mark.parametrize("tool", ["Agent", "Task"])
@pytest.mark.parametrize("agent_type", [None, "general-purpose", "claude"])
def test_general_purpose_calls_are_taken(
    tool: str, agent_type: str | None, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    ran = run_hook(HOOK, agent_payload(project, tool, subagent_type=agent_type), card_env)
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert taken(ran.stdout, fake)


def test_row1_a_subagents_own_call_stays_native(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    payload = {**agent_payload(project), "agent_id": "a-1", "agent_type": "general-purpose"}
    ran = run_hook(HOOK, payload, card_env)
    native(ran, fake, card_env, "subagent-call")


@pytest.mark.parametrize("agent_type", ["Explore", "Plan", "my-plugin:reviewer", "General-Purpose"])
def test_row2_other_agent_types_stay_native(
    agent_type: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    ran = run_hook(HOOK, agent_payload(project, subagent_type=agent_type), card_env)
    native(ran, fake, card_env, "agent-type")


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({"team_name": "crew"}, "team"),
        ({"isolation": "remote"}, "remote"),
        ({"isolation": "somewhere"}, "unknown-isolation"),
    ],
)
def test_row3_teammates_and_remote_agents_stay_native(
    extra: dict[str, object], reason: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    ran = run_hook(HOOK, agent_payload(project, **extra), card_env)
    native(ran, fake, card_env, reason)


@pytest.mark.parametrize("teams", ["1", "true"])
def test_row3_a_teammate_call_stays_native_when_agent_teams_are_on(
    teams: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    """Claude Code starts a teammate for a named call with agent teams on (docs/harnesses.md)."""
    env = {**card_env, "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": teams}
    ran = run_hook(HOOK, agent_payload(project, name="helper", run_in_background=True), env)
    native(ran, fake, env, "teammate")


@pytest.mark.parametrize("teams", [None, "0"])
def test_row3_a_named_call_without_agent_teams_is_taken(
    teams: str | None, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    """Without agent teams `name` starts no teammate: the subagent becomes a card."""
    env = dict(card_env)
    if teams is not None:
        env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"] = teams
    ran = run_hook(HOOK, agent_payload(project, name="helper"), env)
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert taken(ran.stdout, fake)


def test_row4_print_mode_stays_native(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    env = {**card_env, "CLAUDE_CODE_SESSION_ATTENDED": "0", "CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
    ran = run_hook(HOOK, agent_payload(project), env)
    native(ran, fake, env, "not-interactive")


@pytest.mark.parametrize("missing", ["LICH_BIN", "LICH_SESSION_ID"])
def test_row5_outside_lich_is_silent(
    missing: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    env = {k: v for k, v in card_env.items() if k != missing}
    ran = run_hook(HOOK, agent_payload(project), env)
    native(ran, fake, env, "outside-lich")


@pytest.mark.parametrize("kind", ["relative", "missing", "not-executable", "directory"])
def test_row5_a_broken_lich_bin_toasts(
    kind: str, tmp_path: Path, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    if kind == "relative":
        lich_bin = "fake-lich/lich"
    elif kind == "missing":
        lich_bin = str(tmp_path / "nowhere" / "lich")
    elif kind == "not-executable":
        fake.bin.chmod(0o644)
        lich_bin = str(fake.bin)
    else:
        lich_bin = str(tmp_path)
    ran = run_hook(HOOK, agent_payload(project), {**card_env, "LICH_BIN": lich_bin}, cwd=tmp_path)
    assert fake.calls() == []
    message = toast(ran.stdout)
    assert message == (
        'lich: running "Fix the login bug" as a Claude Code subagent: '
        f"LICH_BIN ({lich_bin}) is not an executable file"
    )


def test_row6_cards_off_in_a_worker_toasts(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    env = {**card_env, "LICH_SUBAGENT_CARDS": "off", "LICH_SUBAGENT_DEPTH": "2"}
    ran = run_hook(HOOK, agent_payload(project), env)
    assert fake.calls() == []
    assert "keeps this worker's subagents native" in toast(ran.stdout)


@pytest.mark.parametrize("depth", ["0", None])
def test_row6_cards_off_elsewhere_is_silent(
    depth: str | None, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    env = {k: v for k, v in card_env.items() if k != "LICH_SUBAGENT_DEPTH"}
    env["LICH_SUBAGENT_CARDS"] = "off"
    if depth is not None:
        env["LICH_SUBAGENT_DEPTH"] = depth
    ran = run_hook(HOOK, agent_payload(project), env)
    native(ran, fake, env, "cards-off")


def test_row6_cards_on_in_a_worker_below_the_limit_are_taken(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    ran = run_hook(HOOK, agent_payload(project), {**card_env, "LICH_SUBAGENT_DEPTH": "1"})
    assert taken(ran.stdout, fake)


def test_row8_exactly_8192_utf8_bytes_is_taken(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    prompt = "é" * 4095 + "ab"  # 2 × 4095 + 2 = 8192 bytes, 4097 characters
    assert len(prompt.encode()) == 8192
    ran = run_hook(HOOK, agent_payload(project, prompt=prompt), card_env)
    assert taken(ran.stdout, fake)
    argv = fake.argvs()[0]
    assert argv[argv.index("--prompt") + 1] == prompt


def test_row8_8193_utf8_bytes_toasts(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    prompt = "é" * 4096 + "a"  # 8193 bytes, 4097 characters
    ran = run_hook(HOOK, agent_payload(project, prompt=prompt), card_env)
    assert fake.calls() == []
    assert toast(ran.stdout) == (
        'lich: running "Fix the login bug" as a Claude Code subagent: '
        "the task is 8193 bytes, over lich's limit of 8192 bytes"
    )


def test_row9_plan_mode_stays_native(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    payload = {**agent_payload(project), "permission_mode": "plan"}
    ran = run_hook(HOOK, payload, card_env)
    native(ran, fake, card_env, "plan-mode")


@pytest.mark.parametrize(
    ("tool", "logged"),
    [
        ("Bash", "not-an-agent-call"),
        ("Read", "not-an-agent-call"),
        ("TaskStop", "native:not-our-task"),
    ],
)
def test_other_tools_get_no_verdict(
    tool: str, logged: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    payload = {**agent_payload(project, tool), "tool_input": {"task_id": "not-ours"}}
    ran = run_hook(HOOK, payload, card_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert fake.calls() == []
    [record] = wait_for_log(card_env, 1)
    assert record["decision"] == logged
    assert record.get("probes") is None  # no probe ran for a tool that is not ours


@pytest.mark.parametrize("payload", [b"", b"not json", b"[1]", b'{"tool_name": 5}', b"\xff\xfe"])
def test_bad_input_gets_no_verdict(
    payload: bytes, card_env: dict[str, str], fake: FakeLich
) -> None:
    ran = run_hook(HOOK, payload, card_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert fake.calls() == []
    # a JSON object whose tool_name is not a string is not an Agent call; the rest is bad input
    assert decision(card_env) == ("not-an-agent-call" if b"tool_name" in payload else "bad-input")
