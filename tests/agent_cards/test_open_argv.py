"""docs/agent-cards.md: `lich open`'s argv reads back as the call's values in any common parser.

The model and the prompt come from the model's Agent call; a value that
starts with `-` is passed attached (`--model=-x`, `--prompt=--json`), the
form every common option parser takes for such a value, so it can never be
read as an option. argparse stands in for lich's parser here: like clap and
node's parseArgs, it refuses `--prompt --json` ("expected one argument").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session
from tests.support.runner import run_hook

HOOK = "PreToolUse claude"


def lich_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lich open", exit_on_error=False, add_help=False)
    parser.add_argument("command")
    parser.add_argument("--kind", required=True)
    parser.add_argument("--subagent", action="store_true")
    parser.add_argument("--worktree")
    parser.add_argument("--base")
    parser.add_argument("--model")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--json", action="store_true")
    return parser


@pytest.mark.parametrize(
    ("model", "prompt"),
    [
        ("haiku", "Find and fix the login bug."),
        ("--prompt", "task"),
        ("-x", "--json"),
        (None, "-p --dangerously-skip-permissions"),
        ("opus", "--model gpt --json"),
        ("sonnet", "-"),
    ],
)
def test_a_parser_reads_back_the_calls_model_and_prompt(
    model: str | None, prompt: str, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    """Before: `--model --prompt` and `--prompt --json` were two elements each, which
    a parser reads as an option without its value (argparse: "expected one argument")."""
    fake.script(open={"json": session("pending")})
    extra = {} if model is None else {"model": model}
    ran = run_hook(HOOK, agent_payload(project, prompt=prompt, **extra), card_env)
    assert reason(ran.stdout).startswith("Not an error:")
    [argv] = fake.argvs()
    parsed = lich_parser().parse_args(argv)
    assert (parsed.command, parsed.kind, parsed.subagent, parsed.json) == (
        "open",
        "claude",
        True,
        True,
    )
    assert (parsed.model, parsed.prompt) == (model, prompt)
