"""A session-start run opens the state directory once, however many records it consults
(the last id reported, the claim, the release, the forget), and a report made every time
leaves all of it to the detached sender: the harness does not wait for the state directory.

Counted in the real console script: a `sitecustomize` on PYTHONPATH adds an audit hook
at interpreter start that notes every `open` of the state directory's own path, by the
hook process ("hook") or the detached sender it forks ("sender"), and the sender's connect to
lich: what the sender does after it (remember, release, prune) keeps no one waiting.
"""

from __future__ import annotations

from pathlib import Path

from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support.runner import base_env, run_hook, wait_for_log

AUDIT = """\
import os
import sys

_me = os.getpid()
_dir = os.environ.get("LICH_HOOK_STATE_DIR")
_log = open(os.environ["OPENS_LOG"], "a", buffering=1)


def _opens(event, args):
    if event == "open" and args and args[0] == _dir:
        _log.write("hook\\n" if os.getpid() == _me else "sender\\n")
    elif event == "socket.connect" and os.getpid() != _me:
        _log.write("connect\\n")


sys.addaudithook(_opens)
"""
CRUSH = {"session_id": SID, "hook_event_name": "PreToolUse", "tool_name": "bash"}


def audited(tmp: Path, env: dict[str, str]) -> dict[str, str]:
    site = tmp / "audit-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(AUDIT)
    return {**env, "PYTHONPATH": str(site), "OPENS_LOG": str(tmp / "opens.log")}


def opens(env: dict[str, str], who: str = "hook") -> int:
    """How often `who` opened the state directory (the sender: before it connected)."""
    path = Path(env["OPENS_LOG"])
    text = path.read_text() if path.exists() else ""
    return text.partition("connect\n")[0].count(f"{who}\n")


def test_a_deduped_report_opens_the_state_directory_once(tmp_path: Path, lich: StandIn) -> None:
    env = audited(tmp_path, base_env(tmp_path, **lich.env("card-1")))
    (tmp_path / "state").mkdir(mode=0o700)
    # The first report: last id, claim, forget (and the sender's release, elsewhere).
    assert run_hook("PreToolUse crush", CRUSH, env).returncode == 0
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "report" and record["status"] == 204
    assert opens(env) == 1
    Path(env["OPENS_LOG"]).write_text("")
    # Already reported: one look.
    assert run_hook("PreToolUse crush", CRUSH, env).returncode == 0
    assert wait_for_log(env, 2)[-1]["decision"] == "already-reported"
    assert opens(env) == 1


def test_a_report_that_is_not_deduped_opens_it_once(tmp_path: Path, lich: StandIn) -> None:
    env = audited(tmp_path, base_env(tmp_path, **lich.env("card-1")))
    (tmp_path / "state").mkdir(mode=0o700)
    assert run_hook("SessionStart claude", {"session_id": SID}, env).returncode == 0
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "report" and record["status"] == 204
    assert (opens(env), opens(env, "sender")) == (0, 1)
