"""One act per firing on the real Claude Code, both routes registered (the plugin from a
clone, the `install` entries for this checkout's `lich-hook`), in a tmux pane with a
throwaway HOME and the scripted model (docs/install.md, "Both routes at once"):

- `/resume A`, `/resume B`, `/resume A` within seconds: lich holds A last;
- a worker answering "scripted reply" to two prompts in a row: two answers posted;
- how far apart the two routes' runs of one firing claim (each run's own log line), held
  within claim.REACH (the window follows from it: measured 1-118 ms beside two or eight busy
  loops and a disk writer), and how close two firings of one identity came, printed for
  docs/install.md.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lich_hooks.hook import claim
from tests.real_clients.support.model_api import REPLY_TEXT
from tests.real_clients.support.tmux import Screen
from tests.real_clients.test_plugin_route import (
    Claude,
    add_plugin,
    claude,
    error_lines,
    make_clone,
    save,
    wait_until,
)
from tests.real_clients.test_registration_life import install_entries
from tests.support.runner import LICH_HOOK, log_records

__all__ = ["claude"]  # the fixture, shared

pytestmark = [pytest.mark.real_client, pytest.mark.slow]


def both_routes(claude: Claude, tmp: Path, **extra: str) -> dict[str, str]:
    add_plugin(claude, make_clone(tmp))
    install_entries(claude, LICH_HOOK)
    return {**claude.env(), "LICH_HOOK_LOG": str(tmp / "hook-log.jsonl"), **extra}


def firings(env: dict[str, str], event: str) -> list[list[float]]:
    """Per firing (the runs of one claim name), when each run claimed, in firing order."""
    starts: dict[str, list[float]] = {}
    for run in log_records(env):
        if run.get("event") == event and "claim_at" in run:
            starts.setdefault(str(run["claim_name"]), []).append(float(str(run["claim_at"])))
    return sorted(sorted(times) for times in starts.values())


def apart(found: list[list[float]]) -> list[float]:
    """How far apart each firing's runs claimed, in ms."""
    return [round((times[-1] - times[0]) * 1000, 1) for times in found]


def test_resume_back_and_forth_reports_the_last_one(claude: Claude, tmp_path: Path) -> None:
    env = both_routes(claude, tmp_path)
    folder = tmp_path / "session"
    with Screen(claude.client, env, claude.project, folder, cols=160) as screen:
        screen.submit("say hello")
        wait_until(lambda: len(claude.reports()) == 1, "the first conversation's report")
        screen.wait_for(REPLY_TEXT)
        screen.submit("/clear")
        screen.submit("say hello again")
        wait_until(lambda: len(claude.reports()) == 2, "the cleared conversation's report")
        a, b = (str(r["provider_session_id"]) for r in claude.reports())
        for n, target in enumerate((a, b, a), start=3):
            time.sleep(1.0)  # the last resume's screen drawn: typing earlier can be lost
            screen.submit(f"/resume {target}")
            wait_until(lambda n=n: len(claude.reports()) >= n, f"resume report {n}")
        time.sleep(2.0)  # a duplicate report would have arrived by now
        shown = save("resume-a-b-a-both-routes", screen.text())
    ids = [str(r["provider_session_id"]) for r in claude.reports()]
    found = firings(env, "SessionStart")
    took = found[-1][0] - found[2][0]  # the first /resume A's firing to the second's
    print(f"reports: {ids}; /resume A to /resume A again: {took:.1f} s")
    print(f"SessionStart: each firing's runs claimed apart (ms): {apart(found)}")
    assert max(apart(found)) < claim.REACH * 1000
    assert error_lines(shown) == []
    assert took < 10.0
    assert ids == [a, b, a, b, a], ids  # one report per firing
    decisions = [r["decision"] for r in log_records(env) if r.get("event") == "SessionStart"]
    assert decisions.count("report") == 5 and decisions.count("other-route-acts") == 5


def test_a_worker_answering_the_same_text_twice_posts_two_answers(
    claude: Claude, tmp_path: Path
) -> None:
    env = both_routes(claude, tmp_path, LICH_SUBAGENT_DEPTH="1")
    folder = tmp_path / "worker"
    with Screen(claude.client, env, claude.project, folder, cols=160) as screen:
        screen.submit("Do the errand and report.")
        wait_until(lambda: len(answers(claude)) == 1, "the first answer")
        screen.wait_for(REPLY_TEXT)
        screen.submit("And the follow-up, please.")  # what `lich send` types
        wait_until(lambda: len(answers(claude)) == 2, "the second answer")
        time.sleep(2.0)
        shown = save("worker-same-answer-twice-both-routes", screen.text())
    assert error_lines(shown) == []
    assert (
        answers(claude) == [{"session_id": claude.card["LICH_SESSION_ID"], "text": REPLY_TEXT}] * 2
    )
    found = firings(env, "Stop")
    print(f"Stop: each firing's runs claimed apart (ms): {apart(found)}; ")
    print(f"the second answer's firing {found[1][0] - found[0][0]:.1f} s after the first")
    assert max(apart(found)) < claim.REACH * 1000


def answers(claude: Claude) -> list[dict[str, object]]:
    return [
        r.accepted
        for r in claude.lich.received
        if r.probe is None and r.endpoint == "mod/answer" and r.accepted
    ]
