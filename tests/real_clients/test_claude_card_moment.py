"""The card moment on the real Claude Code: what the person reads under the Agent call, and what
the model's next request carries, for every verdict of `lich open` and in every language.

Measured on 2.1.328 and 2.1.332 (docs/agent-cards.md, "Reading the verdicts"): a deny's
`systemMessage` is drawn first under the call, in the dim colour of hook notes, as
`PreToolUse:Agent says: <text>`, and never reaches the model; the deny's reason is drawn next in
the error colour, as `Error: PreToolUse:Agent hook error: <reason>`, and is the call's
tool_result; `additionalContext` beside the deny reaches the model only, as a role "system"
message `PreToolUse:Agent hook additional context: <text>` after the tool_result, kept in later
turns, and is not drawn.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from lich_hooks.hook.jobs.agent_cards.text import text
from tests.real_clients.conftest import ClaudeEnv
from tests.real_clients.support.agent_calls import directive, skip_if_stub
from tests.real_clients.support.claude import wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.fake_lich import FakeLich, open_answer
from tests.real_clients.support.model_api import (
    AFTER_TOOL_TEXT,
    ModelAPI,
    Request,
    tool_result_text,
)
from tests.real_clients.support.tmux import Screen, block_under

pytestmark = pytest.mark.real_client

# The card moment was measured on 2.1.328 and 2.1.332. Older releases in the version matrix draw
# and deliver it otherwise (docs/harnesses.md, Supported versions): 2.1.269 and 2.1.281 draw an
# "Initializing…" line under the call; before 2.1.269 additionalContext beside a deny never
# reaches the model, and before 2.1.281 the reason is not framed as a hook error.
MEASURED_FROM = "2.1.328"


@pytest.fixture(autouse=True)
def _measured_release(claude_code: Client) -> None:
    if not claude_code.at_least(MEASURED_FROM):
        pytest.skip(
            f"the card moment was measured from {MEASURED_FROM}; this is {claude_code.release}"
        )


SAYS = "PreToolUse:Agent says: "
ERROR = "PreToolUse:Agent hook error: "
CONTEXT = "PreToolUse:Agent hook additional context: "
REPORT = "The flaky test is test_login: it sleeps 0.1 s and races the token refresh."

# one Agent call per verdict; a roster name unlike the label, so a screen showing it is caught
CALLS: list[dict[str, Any]] = [
    {"status": "pending", "label": "Find the flaky test", "name": "flaky-hunter-7"},
    {"status": "unanswered", "label": "Bump the lockfile", "name": "lockfile-bumper-2", "iso": 1},
    {"status": "answered", "label": "Read the CI logs", "name": "ci-reader-3", "answer": REPORT},
    {"status": "unread", "label": "Draft the changelog", "name": "changelog-4"},
    {"status": "exploded", "label": "Rename the module", "name": "renamer-5"},
]
GOOD_NEWS = {"pending": "pending", "unanswered": "pending", "answered": "answered"}


def _squash(value: str) -> str:
    return re.sub(r"\s+", "", value)


def _tool_input(call: dict[str, Any]) -> dict[str, Any]:
    tool_input = {
        "description": call["label"],
        "prompt": f"Task {call['status']}: {call['label']}.",
        "subagent_type": "general-purpose",
    }
    if call.get("iso"):
        tool_input["isolation"] = "worktree"
    return tool_input


def _model_side(request: Request) -> dict[str, tuple[str, list[str]]]:
    """Per Agent call (by description): its tool_result's text, and the hook's system messages
    that follow it before the model's next turn (Claude Code adds notes of its own there)."""
    seen: dict[str, tuple[str, list[str]]] = {}
    names: dict[str, str] = {}
    current: str | None = None
    for message in request.body.get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if message.get("role") == "assistant":
            current = None
            for block in blocks:
                if block.get("type") == "tool_use" and block.get("name") == "Agent":
                    names[block["id"]] = block["input"]["description"]
        elif message.get("role") == "user":
            for block in blocks:
                if block.get("type") == "tool_result" and block.get("tool_use_id") in names:
                    current = names[block["tool_use_id"]]
                    seen[current] = (tool_result_text(block), [])
        elif message.get("role") == "system" and current is not None:
            texts = [str(b.get("text", "")) for b in blocks]
            seen[current][1].extend(t for t in texts if t.startswith("PreToolUse:"))
    return seen


@pytest.mark.parametrize("lang", ["en", "pt-BR", "zh-CN", "es"])
def test_every_verdict_reads_person_first_and_tells_the_model_everything(
    lang: str,
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
    tmp_path: Path,
) -> None:
    opens = {
        _tool_input(c)["prompt"]: open_answer(c["status"], c["label"], c["name"], c.get("answer"))
        for c in CALLS
    }
    fake_lich.answers(opens=opens)
    env = claude_setup(LICH_PROMPT_LANG=lang)
    prompt = "Delegate these. " + " ".join(directive("Agent", _tool_input(c)) for c in CALLS)
    with Screen(claude_code, env, project, tmp_path) as screen:
        screen.submit(prompt)
        screen.wait_for(AFTER_TOOL_TEXT, timeout=120)
        rows = screen.rows()
    runs = wait_for_hook(env, "PreToolUse", len(CALLS))
    skip_if_stub(env, "PreToolUse")
    final = model_api.wait_for(lambda r: r.reply == "text-after-tool", what="the last turn")
    model = _model_side(final)
    drawn = "\n".join(rows)
    print(f"--- claude {claude_code.version}, LICH_PROMPT_LANG={lang} ---\n{drawn}")  # on failure
    for call, run in zip(CALLS, runs, strict=True):
        label, name, status = call["label"], call["name"], call["status"]
        entries = block_under(rows, f"● Agent({label})")
        result, system = model[label]
        assert result.startswith(ERROR), (label, result)
        reason = result[len(ERROR) :]
        # what the model reads, the deny's reason then its additional context, is all there is
        told = "\n".join([reason, *system])
        if status in GOOD_NEWS:
            assert str(run["decision"]).startswith("deny:")
            key = GOOD_NEWS[status]
            person = text(lang, f"{key}_person", label=label)
            # the first words under the call are the person's line, not an error
            assert _squash(entries[0]) == _squash(SAYS + person), (lang, entries, drawn)
            assert _squash(entries[1]) == _squash("Error: " + ERROR + reason), (lang, entries)
            assert reason == text(lang, key)
            [context] = system
            assert context.startswith(CONTEXT)
            assert person not in told  # the person's line never reaches the model
            for literal in ("send_to_session", "lich send", "SendMessage"):
                assert literal in context, (lang, literal)
            assert name in context and label in context
            if status != "answered":
                assert "[lich]" in context and "TaskStop" in context
                stop = f"lich control {name} abort" if call.get("iso") else f"lich close {name}"
                assert f"`{stop}`" in context, context
            else:
                assert REPORT in context
            # the roster name and the rest of the model's part are not drawn
            assert name not in drawn, drawn
        else:
            # bad news reads the same to both: one error line, nothing beside it
            assert entries[0].startswith("Error: " + ERROR), (lang, entries)
            assert _squash(entries[0]) == _squash("Error: " + ERROR + reason)
            assert system == []
            assert label in reason and status in reason


def test_a_long_report_keeps_what_the_model_must_know_in_its_preview(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
    tmp_path: Path,
) -> None:
    """Over 10,000 characters Claude Code keeps an additionalContext in a file and shows the
    model its path and first 2 KB: the roster name and how to reach the worker come first, so
    they are in that preview, and the whole report is in the file."""
    report = "Findings:\n" + "\n".join(f"- test_{i:04d} is stable" for i in range(600)) + "\nEND"
    assert len(report) > 10_000
    call = {"status": "answered", "label": "Audit the tests", "name": "auditor-9"}
    fake_lich.answers(opens={_tool_input(call)["prompt"]: open_answer(answer=report, **call)})
    env = claude_setup()
    with Screen(claude_code, env, project, tmp_path) as screen:
        screen.submit("Delegate this. " + directive("Agent", _tool_input(call)))
        screen.wait_for(AFTER_TOOL_TEXT, timeout=120)
    skip_if_stub(env, "PreToolUse")
    final = model_api.wait_for(lambda r: r.reply == "text-after-tool", what="the last turn")
    [context] = _model_side(final)["Audit the tests"][1]
    assert "<persisted-output>" in context, context[:300]
    preview = context[context.index("Preview") :]
    for needed in ("auditor-9", "send_to_session", "SendMessage", "Findings:"):
        assert needed in preview, needed
    saved = Path(re.search(r"saved to: (\S+)", context).group(1))  # type: ignore[union-attr]
    assert saved.read_text().endswith("\nEND")
