"""opencode 1.18.33 with `lich-hook install opencode`: its sessions reach lich, its subagents never.

A fresh HOME, `lich-hook install opencode` (the real console script), then the
real `opencode run` against the scripted chat-completions API; lich is the
stand-in listener. The plugin opencode loads is exactly the file `install`
wrote, running this checkout's lich-hook by absolute path.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from lich_hooks.human.settings import modules
from lich_hooks.human.settings.registry import MODULES
from lich_hooks.human.standin.server import Received, StandIn
from tests.real_clients.conftest import CARD
from tests.real_clients.support import opencode as oc
from tests.real_clients.support.claude import wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.model_api import AFTER_TOOL_TEXT, REPLY_TEXT, ModelAPI
from tests.real_clients.support.timed import Timed, lich_hook, run_timed
from tests.support.contract_check import assert_client_body
from tests.support.runner import LICH_HOOK

pytestmark = pytest.mark.real_client

# After opencode exits, how long a late report (a subagent's) still has to show up.
SETTLE = 3.0


@pytest.fixture
def opencode_env(
    opencode: Client, tmp_path: Path, project: Path, model_api: ModelAPI, lich: StandIn
) -> dict[str, str]:
    env = oc.opencode_env(tmp_path, **lich.env(CARD))
    oc.seed_home(env, model_api.base_url, opencode)
    installed = lich_hook("install", "opencode", env=env, cwd=project)
    assert installed.returncode == 0, installed.stderr
    plugin = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "plugins" / "lich-hooks.js"
    assert plugin.read_text() == modules.render(MODULES["opencode"].template, str(LICH_HOOK))
    return env


def _reported(received: Received) -> dict[str, object]:
    """The body lich took: 204, and shaped like an accept case of the contract."""
    assert received.status == 204, received.reason
    return assert_client_body("session-start", received.body)


def test_a_run_its_continuation_and_uninstall(
    opencode: Client, opencode_env: dict[str, str], project: Path, lich: StandIn
) -> None:
    env = opencode_env
    first = run_timed(
        [str(opencode.binary), "run", "--print-logs"],
        env,
        project,
        lich,
        expect=1,
        stdin="say hello",
        settle=SETTLE,
    )
    assert first.proc.returncode == 0, first.proc.stderr
    assert REPLY_TEXT in first.proc.stdout
    [report] = first.reports
    body = _reported(report)
    [session] = oc.sessions(opencode, env, project)
    assert body == {
        "session_id": CARD,
        "provider_session_id": session["id"],
        "provider": "opencode",
    }
    # lich-hook's own log: one run, the module's provider, a report (nothing else ran it)
    [record] = wait_for_hook(env, "SessionStart")
    assert (record["provider"], record["decision"]) == ("opencode", "report")
    print(f"\nopencode {opencode.version} run: {first.timing()}{_since_created(first, body)}")

    # `run -c` fires no session.created: the plugin reports from the first message
    again = run_timed(
        [str(opencode.binary), "run", "-c"], env, project, lich, 1, stdin="again", settle=SETTLE
    )
    assert again.proc.returncode == 0, again.proc.stderr
    [report] = again.reports
    assert _reported(report)["provider_session_id"] == session["id"]
    assert [s["id"] for s in oc.sessions(opencode, env, project)] == [session["id"]]
    print(f"opencode {opencode.version} run -c: {again.timing()}")

    removed = lich_hook("uninstall", "opencode", env=env, cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert not (Path(env["XDG_CONFIG_HOME"]) / "opencode" / "plugins" / "lich-hooks.js").exists()
    after = run_timed(
        [str(opencode.binary), "run"], env, project, lich, 0, stdin="say hello", settle=SETTLE
    )
    assert after.proc.returncode == 0, after.proc.stderr
    assert REPLY_TEXT in after.proc.stdout
    assert after.reports == []
    assert len(oc.sessions(opencode, env, project)) == 2  # it ran a session: nothing reported


def _since_created(ran: Timed, body: dict[str, object]) -> str:
    """ ", session.created → report N s", from opencode's own log line for that session."""
    created = re.search(
        rf"timestamp=(\S+) .*message=created id={body['provider_session_id']}", ran.proc.stderr
    )
    if created is None or ran.report_after is None:
        return ""
    at = datetime.fromisoformat(created.group(1).replace("Z", "+00:00")).timestamp()
    return f", session.created → report {ran.started_at + ran.report_after - at:.2f} s"


TASK = {"description": "child", "prompt": "say hi from the child", "subagent_type": "general"}


def test_a_subagent_never_reports_its_own_session(
    opencode: Client,
    opencode_env: dict[str, str],
    project: Path,
    lich: StandIn,
    model_api: ModelAPI,
) -> None:
    ran = run_timed(
        [str(opencode.binary), "run"],
        opencode_env,
        project,
        lich,
        1,
        stdin=f"[[tool:task {json.dumps(TASK)}]]",
        settle=SETTLE,
    )
    assert ran.proc.returncode == 0, ran.proc.stderr
    assert AFTER_TOOL_TEXT in ran.proc.stdout
    # the subagent ran in its own (child) session: the model saw its prompt, and its id
    model_api.wait_for(lambda r: "say hi from the child" in json.dumps(r.body), what="the child")
    results = [
        m.get("content")
        for r in model_api.chat_calls()
        for m in r.body.get("messages") or []
        if m.get("role") == "tool"
    ]
    child = re.search(r'<task id="(ses_\w+)"', " ".join(map(str, results)))
    assert child is not None, results
    [parent] = oc.sessions(opencode, opencode_env, project)  # lists top-level sessions only
    assert child.group(1) != parent["id"]
    [report] = ran.reports
    assert _reported(report)["provider_session_id"] == parent["id"]
    print(f"\nopencode {opencode.version} run with a task subagent: {ran.timing()}")


def test_without_its_guard_the_plugin_would_report_the_subagent(
    opencode: Client,
    opencode_env: dict[str, str],
    project: Path,
    lich: StandIn,
    model_api: ModelAPI,
) -> None:
    """The control for the test above: the child session does reach the plugin."""
    plugin = Path(opencode_env["XDG_CONFIG_HOME"]) / "opencode" / "plugins" / "lich-hooks.js"
    guarded = plugin.read_text()
    guard = "if (info.parentID) {"
    assert guarded.count(guard) == 1
    plugin.write_text(guarded.replace(guard, "if (info.parentID) {\n          tell(info.id)"))
    ran = run_timed(
        [str(opencode.binary), "run"],
        opencode_env,
        project,
        lich,
        2,
        stdin=f"[[tool:task {json.dumps(TASK)}]]",
        settle=SETTLE,
    )
    assert ran.proc.returncode == 0, ran.proc.stderr
    [parent] = oc.sessions(opencode, opencode_env, project)
    reported = [str(_reported(r)["provider_session_id"]) for r in ran.reports]
    assert len(reported) == 2 and parent["id"] in reported
    assert next(s for s in reported if s != parent["id"]).startswith("ses_")
