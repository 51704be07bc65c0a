"""The pure parts: slug, catalog, and which probes the decision table runs."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lich_hooks.jobs.agent_cards import decide, slug
from lich_hooks.jobs.agent_cards.text import CATALOG, EN, LITERALS, text
from lich_hooks.lichenv import LichEnv


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


@given(st.text())
def test_slug_properties(description: str) -> None:
    result = slug.slug(description)
    assert 0 < len(result) <= 40
    assert all(c.isalnum() or c == "-" for c in result)
    assert not result.startswith("-")
    assert not result.endswith("-")
    assert "--" not in result


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
    probes = decide.Probes(lambda: True, lambda: True, lambda: branch)
    decision = decide.decide(data, LichEnv(environ), probes)
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

    probes = decide.Probes(lambda: True, lambda: True, branch)
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
