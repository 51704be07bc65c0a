"""docs/agent-cards.md: the argv lich gets and the verdict Claude Code reads, per outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import Deny, FakeLich, agent_payload, reason, session, toast
from tests.support.runner import run_hook, wait_for_log

HOOK = "PreToolUse claude"
LITERALS = ("[lich]", "send_to_session", "SendMessage", "lich send", "TaskStop")


def test_pending_shared_denies_with_where_and_how(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("pending", path=str(project))})
    ran = run_hook(HOOK, agent_payload(project, model="haiku"), card_env)
    assert (ran.returncode, ran.stderr) == (0, b"")
    [call] = fake.calls()
    assert call["argv"] == [
        "open",
        "--kind",
        "claude",
        "--subagent",
        "--model",
        "haiku",
        "--prompt",
        "Find and fix the login bug.",
        "--json",
    ]
    assert call["cwd"] == str(project)
    deny = Deny(ran.stdout)
    # the person reads one line, first and not as an error; the model reads everything else
    assert (
        deny.person
        == 'lich is running this task as card "Fix login"; its report will come back here.'
    )
    assert deny.reason == "Not an error: lich runs this task instead of a Claude Code subagent."
    assert deny.context is not None and deny.person not in deny.model
    text = deny.model
    assert 'lich session "Fix login"' in text
    assert "roster name fix-login-a1" in text
    assert f"in this same checkout ({project})" in text
    for literal in LITERALS:
        assert literal in text
    assert "do not redo" in text


def test_pending_names_the_lich_stop_command_quoted_for_a_shell(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    """TaskStop with a roster name never reaches the hook on Claude Code 2.1.328, so the
    model is told the lich command; the name is lich's text and is pasted into a shell."""
    fake.script(open={"json": session("pending", name="fix login;x")})
    text = reason(run_hook(HOOK, agent_payload(project), card_env).stdout)
    assert "`lich close 'fix login;x'`" in text
    fake.script(open={"json": session("pending", name="fix-login-a1")})
    text = reason(run_hook(HOOK, agent_payload(project, isolation="worktree"), card_env).stdout)
    assert "`lich control fix-login-a1 abort`" in text


def test_pending_isolated_names_the_branch(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("pending", path="/wt/fix")})
    payload = agent_payload(project, isolation="worktree", description="Fix the login bug")
    ran = run_hook(HOOK, payload, card_env)
    argv = fake.argvs()[0]
    # no git repository here: no --base
    assert argv[:6] == ["open", "--kind", "claude", "--subagent", "--worktree", argv[5]]
    assert argv[5] == "subagent/fix-the-login-bug-yz9q"
    assert "--base" not in argv
    text = reason(ran.stdout)
    assert "on branch subagent/fix-the-login-bug-yz9q in /wt/fix, not in this checkout" in text


def test_unanswered_is_running_too(card_env: dict[str, str], fake: FakeLich, project: Path) -> None:
    fake.script(open={"json": session("unanswered")})
    ran = run_hook(HOOK, agent_payload(project), card_env)
    text = reason(ran.stdout)
    assert text.startswith("Not an error:")
    assert "background" in text
    assert wait_for_log(card_env, 1)[0]["decision"] == "deny:unanswered"


def test_answered_carries_the_report(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    report = "Fixed: the token expiry check used < instead of <=.\nTests pass."
    fake.script(open={"json": session("answered", answer=report, path=str(project))})
    ran = run_hook(HOOK, agent_payload(project), card_env)
    deny = Deny(ran.stdout)
    assert deny.person == 'lich ran this task as card "Fix login", and its report is back.'
    assert deny.reason == "Not an error: lich ran this task instead of a Claude Code subagent."
    text = deny.model
    assert report not in deny.reason  # the report is the model's: a person is not shown it red
    assert report in text
    assert f"The work is in this same checkout ({project}). To reach" in text
    assert "send_to_session" in text
    # an answered worker is not counted: nothing recorded
    assert not list((Path(card_env["LICH_HOOK_STATE_DIR"]) / "workers").glob("*/*.json"))


@pytest.mark.parametrize("status", ["unread", "undelivered"])
def test_never_reached(
    status: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session(status)})
    ran = run_hook(HOOK, agent_payload(project), card_env)
    # bad news is one line both the person and the model read
    deny = Deny(ran.stdout)
    assert deny.reason == (
        f'The task never reached lich card "Fix login" ({status}): open the card in lich'
        " to see why."
    )
    assert (deny.person, deny.context) == (None, None)


def test_unknown_status_names_card_and_branch(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("exploded")})
    ran = run_hook(HOOK, agent_payload(project, isolation="worktree"), card_env)
    deny = Deny(ran.stdout)
    assert deny.reason == (
        'lich answered "exploded" about card "Fix login" (on branch'
        " subagent/fix-the-login-bug-yz9q): open the card in lich."
    )
    assert (deny.person, deny.context) == (None, None)


def test_exit_code_does_not_decide(card_env: dict[str, str], fake: FakeLich, project: Path) -> None:
    fake.script(open={"json": session("pending"), "exit": 3, "stderr": "warning: slow\n"})
    ran = run_hook(HOOK, agent_payload(project), card_env)
    assert reason(ran.stdout).startswith("Not an error:")


@pytest.mark.parametrize(
    ("step", "why"),
    [
        (
            {"stdout": "garbage\n", "stderr": "error: unknown flag --subagent\n", "exit": 2},
            "lich open failed: error: unknown flag --subagent",
        ),
        ({"stdout": "", "exit": 1}, "lich open failed: it printed no JSON (exit 1)"),
        ({"stdout": "[1, 2]", "exit": 0}, "lich open failed: it printed no JSON (exit 0)"),
        (
            {"json": session(None), "stderr": "the card did not start in time\n", "exit": 1},
            'lich opened "Fix login" but the task did not reach it: the card did not start in time',
        ),
        (
            {"json": session(None), "exit": 1},
            'lich opened "Fix login" but the task did not reach it: lich gave no delivery (exit 1)',
        ),
    ],
)
def test_failed_open_toasts_and_runs_natively(
    step: dict[str, object],
    why: str,
    card_env: dict[str, str],
    fake: FakeLich,
    project: Path,
) -> None:
    fake.script(open=step)
    ran = run_hook(HOOK, agent_payload(project), card_env)
    assert (ran.returncode, ran.stderr) == (0, b"")
    said = toast(ran.stdout)
    assert said == f'lich: running "Fix the login bug" as a Claude Code subagent: {why}'


def test_open_past_its_limit_toasts_and_kills_the_open(
    tmp_path: Path, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    never = tmp_path / "never"
    fake.script(open={"wait_for": str(never), "json": session("pending")})
    env = {**card_env, "LICH_HOOK_OPEN_SECONDS": "0.5"}
    ran = run_hook(HOOK, agent_payload(project), env)
    assert toast(ran.stdout).endswith("lich open did not finish within 0.5 s")
    [call] = fake.calls()
    from tests.agent_cards.fake_lich import is_alive

    assert not is_alive(int(call["pid"]))  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "prompt",
    [
        "--help",
        "-p --dangerously-skip-permissions",
        "say \"hi\" and 'bye'; $(rm -rf /) `x` \\n",
        "line one\nline two\n\n  indented\ttab\r\n",
        "中文提示 — العربية — emoji 🧪",
    ],
)
def test_prompt_arrives_as_one_argv_element(
    prompt: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("pending")})
    ran = run_hook(HOOK, agent_payload(project, prompt=prompt), card_env)
    assert reason(ran.stdout).startswith("Not an error:")
    argv = fake.argvs()[0]
    spelled = [f"--prompt={prompt}"] if prompt.startswith("-") else ["--prompt", prompt]
    assert argv[-len(spelled) - 1 :] == [*spelled, "--json"]


@pytest.mark.parametrize(
    ("lang", "person", "start"),
    [
        ("en", 'lich is running this task as card "Fix login"', "Not an error:"),
        ("pt-BR", 'O lich está rodando esta tarefa no card "Fix login"', "Não é um erro:"),
        ("zh-CN", "lich 正在以卡片“Fix login”运行此任务", "这不是错误："),
        ("es", 'lich ejecuta esta tarea en la tarjeta "Fix login"', "No es un error:"),
    ],
)
def test_language_follows_lich_prompt_lang(
    lang: str,
    person: str,
    start: str,
    card_env: dict[str, str],
    fake: FakeLich,
    project: Path,
) -> None:
    fake.script(open={"json": session("pending")})
    ran = run_hook(HOOK, agent_payload(project), {**card_env, "LICH_PROMPT_LANG": lang})
    deny = Deny(ran.stdout)
    assert deny.person is not None and deny.person.startswith(person)
    assert deny.reason.startswith(start)
    assert deny.context is not None
    for literal in LITERALS:
        assert literal in deny.context, (lang, literal)
    assert "fix-login-a1" in deny.context and "`lich close fix-login-a1`" in deny.context


def test_unknown_language_is_english(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("pending")})
    ran = run_hook(HOOK, agent_payload(project), {**card_env, "LICH_PROMPT_LANG": "fr"})
    assert reason(ran.stdout).startswith("Not an error:")


def test_verdict_is_one_json_object_with_any_script(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    label = 'Corrigir "autenticação"\n— 修复'
    fake.script(open={"json": session("pending", label=label)})
    ran = run_hook(HOOK, agent_payload(project), card_env)
    verdict = json.loads(ran.stdout)
    assert f'"{label}"' in verdict["hookSpecificOutput"]["additionalContext"]
    assert f'"{label}"' in verdict["systemMessage"]


def test_answered_isolated_names_branch_and_path(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("answered", answer="Done.", path="/wt/fix")})
    ran = run_hook(HOOK, agent_payload(project, isolation="worktree"), card_env)
    text = reason(ran.stdout)
    assert "The work is on branch subagent/fix-the-login-bug-yz9q in /wt/fix. To reach" in text
    assert text.endswith("Its report:\n\nDone.")


def test_a_prompt_no_argv_can_carry_runs_natively(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("pending")})
    payload = json.dumps(agent_payload(project, prompt="X")).replace('"X"', '"bad \\ud800"')
    ran = run_hook(HOOK, payload, card_env)
    assert (ran.returncode, ran.stderr) == (0, b"")
    said = toast(ran.stdout)
    assert said.startswith('lich: running "Fix the login bug" as a Claude Code subagent:')
    assert fake.calls() == []
