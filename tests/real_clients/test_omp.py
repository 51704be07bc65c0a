"""omp 18.2.3 with `lich-hook install omp`: new and switched sessions reach lich, subagents never.

A fresh HOME, `lich-hook install omp` (the real console script), then the real
omp on Bun against the scripted chat-completions API, in print mode and
interactively on a pseudo-terminal; lich is the stand-in listener. The
extension omp loads is exactly the file `install` wrote, running this
checkout's lich-hook by absolute path.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lich_hooks.human.settings import modules
from lich_hooks.human.settings.registry import MODULES
from lich_hooks.human.standin.server import Received, StandIn
from tests.real_clients.conftest import CARD
from tests.real_clients.support import omp as om
from tests.real_clients.support.claude import Terminal, wait_for_hook
from tests.real_clients.support.clients import OmpClient
from tests.real_clients.support.model_api import AFTER_TOOL_TEXT, REPLY_TEXT, ModelAPI
from tests.real_clients.support.timed import lich_hook, run_timed
from tests.support.contract_check import assert_client_body
from tests.support.runner import LICH_HOOK

pytestmark = pytest.mark.real_client

# After omp exits, how long a late report (a subagent's) still has to show up.
SETTLE = 3.0
EXTENSION = Path(".omp") / "agent" / "extensions" / "lich-hooks.ts"


@pytest.fixture
def omp_env(
    omp: OmpClient, tmp_path: Path, project: Path, model_api: ModelAPI, lich: StandIn
) -> dict[str, str]:
    env = om.omp_env(omp, tmp_path, **lich.env(CARD))
    om.seed_home(env, model_api.base_url)
    installed = lich_hook("install", "omp", env=env, cwd=project)
    assert installed.returncode == 0, installed.stderr
    extension = Path(env["HOME"]) / EXTENSION
    assert extension.read_text() == modules.render(MODULES["omp"].template, str(LICH_HOOK))
    return env


def _reported(received: Received) -> str:
    """The id lich took: 204, a body shaped like an accept case, this card, provider omp."""
    assert received.status == 204, received.reason
    body = assert_client_body("session-start", received.body)
    assert (body["session_id"], body["provider"]) == (CARD, "omp")
    session = body["provider_session_id"]
    assert isinstance(session, str)
    return session


def test_a_print_run_reports_its_session_and_uninstall_stops_it(
    omp: OmpClient, omp_env: dict[str, str], project: Path, lich: StandIn
) -> None:
    argv = [str(omp.binary), "-p", "say hello"]
    ran = run_timed(argv, omp_env, project, lich, 1, settle=SETTLE)
    assert ran.proc.returncode == 0, ran.proc.stderr
    assert REPLY_TEXT in ran.proc.stdout
    [report] = ran.reports
    [session] = om.session_files(omp_env)  # omp's own file: <time>_<id>.jsonl, header id
    assert _reported(report) == session
    # lich-hook's own log: one run, the module's provider, a report (nothing else ran it)
    [record] = wait_for_hook(omp_env, "SessionStart")
    assert (record["provider"], record["decision"]) == ("omp", "report")
    print(f"\nomp {omp.version} -p: {ran.timing()}")

    # outside lich the extension still runs lich-hook, whose rule refuses (the JavaScript holds
    # no LICH_* check: omp fires once per conversation, so no process per message)
    card = ("LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID")
    outside = {k: v for k, v in omp_env.items() if k not in card}
    away = run_timed(argv, outside, project, lich, 0, settle=SETTLE)
    assert away.proc.returncode == 0 and away.reports == [], away.proc.stderr
    assert wait_for_hook(omp_env, "SessionStart", 2)[1]["decision"] == "outside-lich"

    removed = lich_hook("uninstall", "omp", env=omp_env, cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert not (Path(omp_env["HOME"]) / EXTENSION).exists()
    after = run_timed(argv, omp_env, project, lich, 0, settle=SETTLE)
    assert after.proc.returncode == 0, after.proc.stderr
    assert REPLY_TEXT in after.proc.stdout
    assert after.reports == []
    assert len(om.session_files(omp_env)) == 3  # it ran a session: nothing reported


# 18.3.x requires `solutionSpace` on each task; 18.2.3's schema deletes keys it does not know
TASK = {
    "context": "a lich-hooks test",
    "tasks": [{"name": "LichSub", "task": "say pong", "solutionSpace": "one fixed answer"}],
}


def test_a_subagent_never_reports_its_own_session(
    omp: OmpClient, omp_env: dict[str, str], project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    argv = [str(omp.binary), "-p", f"[[tool:task {json.dumps(TASK)}]]"]
    ran = run_timed(argv, omp_env, project, lich, 1, settle=SETTLE)
    assert ran.proc.returncode == 0, ran.proc.stderr
    assert AFTER_TOOL_TEXT in ran.proc.stdout
    # the subagent ran in its own session, which fired session_start in the extension
    [child] = om.subagent_files(omp_env)
    [parent] = om.session_files(omp_env)
    assert child != parent
    [report] = ran.reports
    assert _reported(report) == parent
    print(f"\nomp {omp.version} -p with a task subagent: {ran.timing()}")


def test_interactive_new_and_resume_report_the_switched_to_session(
    omp: OmpClient, omp_env: dict[str, str], project: Path, lich: StandIn
) -> None:
    started = time.monotonic()
    with Terminal(omp, omp_env, project) as term:
        [report] = lich.wait(1, 90)
        first = _reported(report)
        timings = [f"start → report {time.monotonic() - started:.2f} s"]
        term.wait_for_text("Scripted Model", 60)
        term.submit("say hello")
        mark = term.wait_for_text(REPLY_TEXT, 60)

        term.submit("/new")
        typed = time.monotonic()
        new = lich.wait(2, 60)
        timings.append(f"/new ⏎ → report {time.monotonic() - typed:.2f} s")
        assert len(new) == 2, term.screen()[-800:]
        second = _reported(new[1])
        assert second != first
        term.submit("second conversation")
        term.wait_for_text(REPLY_TEXT, 60, after=mark)

        term.submit(f"/resume {first}")
        typed = time.monotonic()
        resumed = lich.wait(3, 60)
        timings.append(f"/resume ⏎ → report {time.monotonic() - typed:.2f} s")
        assert len(resumed) == 3, term.screen()[-800:]
        assert _reported(resumed[2]) == first
    # both are omp's own conversations, on disk under those ids
    assert set(om.session_files(omp_env)) == {first, second}
    assert len(lich.received) == 3
    print(f"\nomp {omp.version} interactive: {', '.join(timings)}")


def test_without_its_guard_the_extension_would_report_the_subagent(
    omp: OmpClient, omp_env: dict[str, str], project: Path, lich: StandIn
) -> None:
    """The control for the test above: the subagent's session_start does reach the extension."""
    extension = Path(omp_env["HOME"]) / EXTENSION
    guarded = extension.read_text()
    guards = [line for line in guarded.splitlines(True) if "// a subagent" in line]
    assert len(guards) == 2  # ctx.agent.kind (18.3.2+), the session_init entry (before)
    unguarded = guarded
    for guard in guards:
        unguarded = unguarded.replace(guard, "")
    extension.write_text(unguarded)
    argv = [str(omp.binary), "-p", f"[[tool:task {json.dumps(TASK)}]]"]
    ran = run_timed(argv, omp_env, project, lich, 2, settle=SETTLE)
    assert ran.proc.returncode == 0, ran.proc.stderr
    [child] = om.subagent_files(omp_env)
    [parent] = om.session_files(omp_env)
    assert sorted(_reported(r) for r in ran.reports) == sorted([parent, child])
