"""SessionStart from the real Codex CLI (`codex exec`) reaches lich with provider codex."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.real_clients.conftest import CARD
from tests.real_clients.support.claude import hook_runs, wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.codex import codex_env, run_exec, seed_codex_home
from tests.real_clients.support.model_api import REPLY_TEXT, ModelAPI

pytestmark = pytest.mark.real_client


@pytest.fixture
def codex_setup(
    codex: Client, tmp_path: Path, model_api: ModelAPI, lich: StandIn
) -> dict[str, str]:
    """A CODEX_HOME whose hooks.json registers lich-hook, trusted the way `/hooks` records it."""
    codex_home = tmp_path / "codex-home"
    seed_codex_home(codex_home, model_api.base_url)
    return codex_env(tmp_path, codex_home, **lich.env(CARD))


def test_codex_exec_reports_its_session(
    codex: Client, codex_setup: dict[str, str], project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    ran = run_exec(codex, "say hello", codex_setup, project)
    assert ran.returncode == 0, ran.stderr
    assert REPLY_TEXT in ran.stdout
    assert "hook: SessionStart Completed" in ran.stderr
    [record] = wait_for_hook(codex_setup, "SessionStart")
    assert (record["provider"], record["decision"]) == ("codex", "report")
    [request] = lich.wait(1)
    assert (request.endpoint, request.status) == ("session-start", 204)
    body = request.accepted
    assert body is not None
    assert (body["session_id"], body["provider"]) == (CARD, "codex")
    # the id is the conversation Codex ran: the one it prints and names its rollout after
    printed = re.search(r"session id: (\S+)", ran.stderr)
    assert printed is not None
    assert body["provider_session_id"] == printed.group(1)
    rollouts = list((Path(codex_setup["CODEX_HOME"]) / "sessions").rglob("rollout-*.jsonl"))
    assert [r.name for r in rollouts if printed.group(1) in r.name] == [r.name for r in rollouts]
    assert len(model_api.model_calls()) == 1


def test_codex_skips_an_untrusted_hook_silently(
    codex: Client, codex_setup: dict[str, str], project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    """Why the registration docs must tell Codex users to trust the hook (`/hooks`)."""
    seed_codex_home(Path(codex_setup["CODEX_HOME"]), model_api.base_url, trust=False)
    ran = run_exec(codex, "say hello", codex_setup, project)
    assert ran.returncode == 0, ran.stderr
    assert REPLY_TEXT in ran.stdout
    # the turn is over and the model answered: a trusted hook would have run before it
    assert model_api.model_calls()
    assert "hook: SessionStart" not in ran.stderr
    assert hook_runs(codex_setup) == []
    assert lich.received == []


def test_codex_exec_prints_no_hook_system_message(
    codex: Client, codex_setup: dict[str, str], project: Path, model_api: ModelAPI
) -> None:
    """docs/install.md: the person's line a SessionStart prints (`systemMessage`) is shown by
    the TUI, never by `codex exec`."""
    said = "lich-hooks test: a SessionStart systemMessage"
    hook = {"type": "command", "command": f"echo '{json.dumps({'systemMessage': said})}'"}
    hooks = Path(codex_setup["CODEX_HOME"]) / "hooks.json"
    hooks.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}}))
    ran = run_exec(codex, "say hello", codex_setup, project, bypass_trust=True)
    assert ran.returncode == 0, ran.stderr
    assert "hook: SessionStart Completed" in ran.stderr  # it ran
    assert said not in ran.stdout + ran.stderr
