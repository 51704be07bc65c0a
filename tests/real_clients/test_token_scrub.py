"""A scrubbed token is said, never swallowed: the real Claude Code 2.1.332 with
CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1 (bubblewrap on PATH, as where it was measured) strips
LICH_TOKEN from every hook and keeps LICH_PORT and LICH_SESSION_ID; both routes registered,
the person sees one line, nothing is sent, and doctor names it (docs/transport.md,
"A scrubbed token").
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.real_clients.support.model_api import REPLY_TEXT
from tests.real_clients.support.tmux import Screen
from tests.real_clients.test_firing_identity import both_routes
from tests.real_clients.test_plugin_route import Claude, claude, doctor, error_lines, save
from tests.support.runner import log_records

__all__ = ["claude"]  # the fixture, shared

pytestmark = [pytest.mark.real_client, pytest.mark.slow]

LINE = "lich-hooks cannot report this session to lich: this card's LICH_TOKEN is missing"


def test_the_scrub_is_said_once_and_doctor_names_it(claude: Claude, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not on PATH: `apt-get install bubblewrap`")
    env = both_routes(claude, tmp_path, CLAUDE_CODE_SUBPROCESS_ENV_SCRUB="1")
    with Screen(claude.client, env, claude.project, tmp_path / "session", cols=160) as screen:
        screen.wait_for(LINE[-30:])
        screen.submit("say hello")
        screen.wait_for(REPLY_TEXT)
        time.sleep(3.0)  # any report, or a second line, would be here by now
        shown = save("token-scrubbed-both-routes", screen.text())
    flat = " ".join(shown.split())
    assert flat.count(LINE) == 1, flat
    assert "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1 is set" in flat
    assert error_lines(shown) == []
    assert [r for r in claude.lich.received if r.probe is None] == []
    decisions = sorted(str(r["decision"]) for r in log_records(env))
    assert decisions.count("token-scrubbed") == 1, decisions
    # doctor in the card's shell: the token is there, the scrub that will take it too
    _, report, _ = doctor(env, claude.project)
    rows = by_name(report)
    assert rows["Claude Code credential scrub"]["status"] == "warn"
    # and where the scrub already took it (doctor run by the session's own Bash tool)
    scrubbed = {k: v for k, v in env.items() if k != "LICH_TOKEN"}
    code, report, _ = doctor(scrubbed, claude.project)
    rows = by_name(report)
    assert code == 1 and rows["lich variables"]["status"] == "fail"
    assert "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB" in str(rows["lich variables"]["summary"])


def by_name(report: dict[str, object]) -> dict[str, dict[str, object]]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return {str(c["name"]): c for c in checks}
