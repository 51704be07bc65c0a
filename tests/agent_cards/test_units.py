"""The pure parts: slug, catalog, and which probes the decision table runs."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.base.lichenv import LichEnv
from lich_hooks.hook.jobs.agent_cards import eligibility, lich_process, slug, verdict
from lich_hooks.hook.jobs.agent_cards.text import CATALOG, EN, text


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        (
            "Investigate why the websocket reconnect loop never stops retrying",
            "investigate-why-the-websocket-reconnect",
        ),
        ("a b c d e f g", "a-b-c-d-e"),
        ("Corrigir autenticação do usuário", "corrigir-autenticação-do-usuário"),
        ("!!! ???", "agent"),
        ("", "agent"),
        ("修复 登录 错误", "修复-登录-错误"),
        ("x" * 60, "x" * 40),
        ("ab " + "y" * 45, ("ab-" + "y" * 45)[:40]),  # under 10 characters: the word is taken
        ("abcdefgh ijk " + "z" * 35, "abcdefgh-ijk"),  # 2 words and 10+ characters: stop
    ],
)
def test_slug_examples(description: str, expected: str) -> None:
    assert slug.slug(description) == expected


def test_suffix_example() -> None:
    assert slug.suffix("toolu_01XyZ_9Q") == "yz9q"
    assert slug.branch("a b c d e f g", "toolu_01XyZ_9Q") == "subagent/a-b-c-d-e-yz9q"


@settings(deadline=None)
@given(st.text())
def test_slug_properties(description: str) -> None:
    result = slug.slug(description)
    assert 0 < len(result) <= 40
    assert all(c.isalnum() or c == "-" for c in result)
    assert not result.startswith("-")
    assert not result.endswith("-")
    assert "--" not in result


@settings(deadline=None)
@given(st.text(), st.text(alphabet=string.ascii_letters + string.digits + "_", min_size=4))
def test_branch_properties(description: str, tool_use_id: str) -> None:
    name = slug.branch(description, tool_use_id)
    assert name.startswith("subagent/")
    assert name.endswith("-" + slug.suffix(tool_use_id))
    alnum = [c for c in tool_use_id if c.isalnum()]
    assert slug.suffix(tool_use_id) == "".join(alnum[-4:]).lower()


def test_suffix_without_an_id_is_still_four_characters() -> None:
    assert len(slug.suffix(None)) == 4
    assert len(slug.suffix("___")) == 4


def test_every_language_has_every_key() -> None:
    for lang, table in CATALOG.items():
        assert set(table) == set(EN), lang


def fields(template: str) -> set[str]:
    import string as s

    return {name for _, name, _, _ in s.Formatter().parse(template) if name}


# Words the model or lich acts on: every translation keeps them as they are.
LITERALS = ["[lich]", "send_to_session", "wait_for_answer", "SendMessage", "lich send"]
LITERALS += ["TaskStop", "subagent/"]


def test_every_translation_uses_the_same_placeholders_and_literals() -> None:
    for lang, table in CATALOG.items():
        for key, template in table.items():
            assert fields(template) == fields(EN[key]), (lang, key)
            for literal in LITERALS:
                assert (literal in template) == (literal in EN[key]), (lang, key, literal)


def test_pending_says_it_is_not_an_error_first() -> None:
    starts = {"en": "Not an error", "pt-BR": "Não é um erro", "zh-CN": "这不是错误", "es": "No es"}
    for lang, start in starts.items():
        assert CATALOG[lang]["pending"].startswith(start)
        assert CATALOG[lang]["answered"].startswith(start)


def test_unknown_language_and_missing_key_fall_back_to_english() -> None:
    assert text("fr", "workers_many", count=3) == "lich: 3 workers"
    del_key = dict(CATALOG["es"])
    CATALOG["es"].pop("workers_many")
    try:
        assert text("es", "workers_many", count=3) == "lich: 3 workers"
    finally:
        CATALOG["es"].clear()
        CATALOG["es"].update(del_key)


ENV = {"LICH_BIN": "/opt/lich/bin/lich", "LICH_SESSION_ID": "card-1", "LICH_SUBAGENT_DEPTH": "0"}


def call(**tool_input: object) -> dict[str, object]:
    fields: dict[str, object] = {"description": "d", "prompt": "p"}
    fields.update(tool_input)
    return {"tool_name": "Agent", "tool_input": fields, "tool_use_id": "toolu_1", "cwd": "/w"}


def probed(
    data: dict[str, object], environ: dict[str, str], branch: str | None = "main"
) -> tuple[str, list[str]]:
    probes = eligibility.Probes(lambda: True, lambda: True, lambda: branch)
    decision = eligibility.decide(data, LichEnv(environ), probes)
    return decision.kind, probes.ran


def test_probes_run_only_when_a_row_needs_them() -> None:
    assert probed(call(subagent_type="Explore"), ENV) == ("native", [])
    assert probed({**call(), "agent_id": "x"}, ENV) == ("native", [])
    assert probed(call(), {}) == ("native", [])
    assert probed(call(prompt="é" * 5000), ENV) == ("toast", ["interactive"])
    assert probed(call(), ENV) == ("take", ["interactive", "bin"])
    # git only for an isolated call under an older lich
    assert probed(call(isolation="worktree"), ENV) == ("take", ["interactive", "bin"])
    older = {k: v for k, v in ENV.items() if k != "LICH_SUBAGENT_DEPTH"}
    assert probed(call(isolation="worktree"), older) == ("take", ["interactive", "branch", "bin"])
    assert probed(call(isolation="worktree"), older, "subagent/x-1a2b") == (
        "native",
        ["interactive", "branch"],
    )


def test_the_branch_probe_runs_once() -> None:
    runs = []

    def branch() -> str:
        runs.append(1)
        return "main"

    probes = eligibility.Probes(lambda: True, lambda: True, branch)
    assert probes.branch() == probes.branch() == "main"
    assert runs == [1]


def test_chinese_uses_full_width_punctuation() -> None:
    # ASCII brackets and commas inside Chinese prose read as typos; the
    # English TaskStop result Claude Code itself prints is the one exception.
    native = "Successfully stopped task: {id} ({description})"
    for key, template in CATALOG["zh-CN"].items():
        prose = template.replace(native, "")
        assert not any(c in prose for c in "(),;"), key


def test_chinese_pending_sentence_reads_whole() -> None:
    shared = text("zh-CN", "where_shared", path="/p")
    isolated = text("zh-CN", "where_isolated", branch="subagent/x-1a2b", path="/w")
    pending = CATALOG["zh-CN"]["pending_context"]
    assert "它{where}。" in pending
    assert shared == "在同一个工作目录（/p）中工作，和你编辑的是同一批文件"
    assert isolated == "在 /w 的分支 subagent/x-1a2b 上工作，而不是在当前工作目录中"


@pytest.mark.parametrize(
    ("lang", "expected"), [("pt-BR", "código de saída 3"), ("es", "código de salida 3")]
)
def test_exit_codes_are_named_as_such(lang: str, expected: str) -> None:
    # a bare "saída"/"salida" also means "output"
    assert text(lang, "stop_refused_detail", code=3) == expected


# What the real Claude Code does with each Agent call (docs/harnesses.md, measured on 2.1.145,
# 2.1.269 and 2.1.332): with agent teams on, a call with a `name` starts a teammate; 2.1.145
# also wanted `team_name` (so a team_name call keeps its own row); with teams off no call does.
TEAMMATE_CASES = [
    # (agent teams on, tool_input extra, decision reason)
    (False, {}, "take"),
    (False, {"name": "helper"}, "take"),
    (False, {"name": "helper", "run_in_background": True}, "take"),
    (False, {"name": "helper", "run_in_background": False}, "take"),
    (False, {"team_name": "crew"}, "team"),
    (True, {}, "take"),
    (True, {"run_in_background": True}, "take"),
    (True, {"run_in_background": False}, "take"),
    (True, {"name": "helper"}, "teammate"),
    (True, {"name": "helper", "team_name": "crew"}, "teammate"),
    (True, {"name": "helper", "run_in_background": True}, "teammate"),
    (True, {"name": "helper", "run_in_background": False}, "teammate"),
    (True, {"name": ""}, "take"),
    (True, {"team_name": "crew"}, "team"),
]


@pytest.mark.parametrize(("teams", "extra", "reason"), TEAMMATE_CASES)
def test_only_a_teammate_call_stays_native_for_being_one(
    teams: bool, extra: dict[str, object], reason: str
) -> None:
    probes = eligibility.Probes(lambda: True, lambda: True, lambda: "main")
    decision = eligibility.decide(call(**extra), LichEnv(ENV), probes, agent_teams=teams)
    assert decision.reason == reason


@pytest.mark.parametrize(
    ("value", "on"),
    [
        *[("1", True), ("true", True), (" TRUE ", True), ("yes", True), ("on", True)],
        *[("0", False), ("", False), ("false", False), ("2", False), ("enabled", False)],
    ],
)
def test_agent_teams_switch_reads_like_claude_code(value: str, on: bool) -> None:
    assert eligibility.agent_teams_on({"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": value}) is on
    assert eligibility.agent_teams_on({}) is False


@settings(deadline=None)
@given(
    name=st.one_of(st.none(), st.text(max_size=8)),
    team=st.one_of(st.none(), st.text(max_size=8)),
    background=st.one_of(st.none(), st.booleans()),
    teams=st.booleans(),
)
def test_teammate_rule_property(
    name: str | None, team: str | None, background: bool | None, teams: bool
) -> None:
    """Native for being a teammate exactly when teams are on and a name is given; the
    team_name row is unchanged; nothing else about the call is read."""
    extra = {
        k: v
        for k, v in {"name": name, "team_name": team, "run_in_background": background}.items()
        if v is not None
    }
    probes = eligibility.Probes(lambda: True, lambda: True, lambda: "main")
    reason = eligibility.decide(call(**extra), LichEnv(ENV), probes, agent_teams=teams).reason
    if teams and name:
        assert reason == "teammate"
    elif team:
        assert reason == "team"
    else:
        assert reason == "take"


PERSON_KEYS = ("pending_person", "answered_person", "stop_shared_person", "stop_isolated_person")


@pytest.mark.parametrize("lang", sorted(CATALOG))
def test_a_persons_line_is_one_short_sentence_without_the_models_names(lang: str) -> None:
    """Claude Code draws it first under the call (docs/agent-cards.md): the label and the
    news, nothing the person has no use for."""
    for key in PERSON_KEYS:
        line = text(lang, key, label="Find the flaky test")
        assert "\n" not in line and len(line) <= 90, (lang, key, line)
        assert '"Find the flaky test"' in line or "“Find the flaky test”" in line
        assert not any(literal in line for literal in LITERALS), (lang, key)
    for key in ("pending", "answered"):
        reason = text(lang, key)
        assert "\n" not in reason and len(reason) <= 90, (lang, key, reason)


@pytest.mark.parametrize("lang", sorted(CATALOG))
def test_the_report_comes_after_what_the_model_must_know(lang: str) -> None:
    """Over 10,000 characters Claude Code keeps an additionalContext in a file and shows the
    model its first 2 KB: the roster name and how to reach the worker must be in them."""
    report = "r" * 20_000
    context = text(lang, "answered_context", label="L", name="n-1", answer=report, where="/p")
    assert context.endswith(report)
    head = context[: -len(report)]
    assert len(head.encode()) < 2048
    assert "n-1" in head and "send_to_session" in head and "SendMessage" in head


def _opened(status: str, answer: str = "") -> verdict.Verdict:
    session: dict[str, object] = {
        "id": "s1",
        "name": "flaky-hunter-7",
        "label": "Find the flaky test",
    }
    session["path"] = "/p"
    session["delivery"] = {"ticket": "t", "target": "s1", "status": status, "answer": answer}
    result = lich_process.Ran(lich_process.PRINTED, 0, json.dumps(session).encode())
    call = eligibility.Call("prompt", "Find the flaky test", None, False, "toolu_1", "/p")
    return verdict.for_open(result, call, None, "en", 0.0, context_seen=False)


@pytest.mark.parametrize("status", ["pending", "unanswered", "answered"])
def test_a_release_that_drops_the_context_gets_it_in_the_reason(status: str) -> None:
    """Claude Code up to 2.1.178 never shows the model a deny's additionalContext
    (docs/harnesses.md): the roster name, the [lich] note and `lich close` go into the
    reason after its first line, and nothing is left in a field that release drops."""
    out = json.loads(_opened(status, "the report").stdout)
    hook = out["hookSpecificOutput"]
    assert "additionalContext" not in hook
    first, rest = hook["permissionDecisionReason"].split("\n\n", 1)
    assert first.startswith("Not an error")
    assert "flaky-hunter-7" in rest
    assert ("the report" in rest) if status == "answered" else ("`lich close" in rest)
    assert "Find the flaky test" in out["systemMessage"]


def test_the_context_split_follows_the_variable_that_came_with_it() -> None:
    assert verdict.context_reaches_model({"CLAUDE_CODE_SESSION_ATTENDED": "1"})
    assert verdict.context_reaches_model({"CLAUDE_CODE_SESSION_ATTENDED": "0"})
    assert not verdict.context_reaches_model({"CLAUDE_CODE_ENTRYPOINT": "cli"})
