"""The opencode plugin's own choices, run under Node with a scripted opencode around it.

The real opencode (tests/real_clients/test_opencode.py) shows the plugin works
in the order opencode happened to deliver things there. Here the driver feeds
the plugin the orders opencode can also produce — a subagent's message before
its session.created event (events are delivered asynchronously), a continued
session nobody saw created, a failed lookup — and the plugin's spawns run the
real lich-hook against the stand-in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from lich_hooks.human.settings import modules
from lich_hooks.human.settings.registry import MODULES
from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import LICH_HOOK, base_env, wait_for_log

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")

# The driver: load the plugin with a stand-in opencode client and play the steps, each handler
# awaited as opencode awaits chat.message.
DRIVER = """
const [plugin, sessions, steps] = process.argv.slice(2)
const known = JSON.parse(sessions)
const client = { session: { get: async ({ path: { id } }) => {
  if (id === "ses_broken") throw new Error("lookup failed")
  return { data: id in known ? { id, parentID: known[id] ?? undefined } : undefined }
} } }
const { LichHooks } = await import(plugin)
const hooks = await LichHooks({ client })
for (const [kind, arg] of JSON.parse(steps)) {
  if (kind === "created") {
    hooks.event({ event: { type: "session.created", properties: { info: arg } } })
  } else {
    await hooks["chat.message"]({ sessionID: arg }, {})
  }
  console.log(JSON.stringify({ kind }))
  await new Promise((resolve) => setTimeout(resolve, 0)) // let a lookup answer, as opencode would
}
"""

ROOT, CHILD, CONTINUED = "ses_root1", "ses_child1", "ses_continued1"
SESSIONS = {ROOT: None, CHILD: ROOT, CONTINUED: None}
STEPS: list[list[Any]] = [
    ["created", {"id": ROOT}],
    ["chat", ROOT],  # the first message of the new session: already reported
    ["chat", CHILD],  # a subagent's message before its session.created arrived
    ["created", {"id": CHILD, "parentID": ROOT}],
    ["chat", CHILD],
    ["chat", CONTINUED],  # `run -s` / the TUI's list: never seen created, no parent
    ["chat", CONTINUED],
    ["chat", "ses_broken"],  # opencode cannot say: no report
    ["chat", ROOT],  # back to the first session
]


def _drive(tmp: Path, env: dict[str, str], hook: Path = LICH_HOOK) -> list[dict[str, object]]:
    plugin = tmp / "lich-hooks.mjs"
    plugin.write_text(modules.render(MODULES["opencode"].template, str(hook)))
    driver = tmp / "driver.mjs"
    driver.write_text(DRIVER)
    ran = subprocess.run(
        ["node", str(driver), str(plugin), json.dumps(SESSIONS), json.dumps(STEPS)],
        env={**env, "PATH": f"{Path(shutil.which('node') or 'node').parent}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines()]


def test_reports_new_continued_and_switched_sessions_never_a_child(
    tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-5"))
    _drive(tmp_path, env)
    wait_for_log(env, 3)  # each lich-hook run logs once, after its send
    reported: list[str] = []
    for received in lich.wait(3):
        body = assert_client_body("session-start", received.body)
        assert (body["session_id"], body["provider"], received.status) == (
            "card-5",
            "opencode",
            204,
        )
        reported.append(str(body["provider_session_id"]))
    assert sorted(reported) == sorted([ROOT, CONTINUED, ROOT])
    assert len(lich.wait(4, timeout=1.0)) == 3  # the child and the broken lookup never report


# A lich-hook that cannot end until the test lets it: it says it started, then waits on a FIFO.
HELD_HOOK = """#!/bin/sh
cat >/dev/null
echo started >> "$HELD_MARKS"
read _ < "$HELD_FIFO"
echo ended >> "$HELD_MARKS"
"""


def test_an_awaited_handler_never_waits_for_its_lich_hook(tmp_path: Path) -> None:
    """opencode awaits chat.message: every step returns while each run it started is held.

    Proved by count, not by a clock: the hook cannot end until the FIFO is written, which the
    test does only after the driver has played every step, so a handler that waited for its
    run would hold the driver until its 60 s limit.
    """
    fifo, marks = tmp_path / "held", tmp_path / "marks"
    os.mkfifo(fifo)
    hook = tmp_path / "held-lich-hook"
    hook.write_text(HELD_HOOK)
    hook.chmod(0o700)
    env = base_env(tmp_path, LICH_PORT="9", LICH_TOKEN="t", LICH_SESSION_ID="card-6")
    env.update(HELD_FIFO=str(fifo), HELD_MARKS=str(marks))
    # opening for read and write never blocks; each held run reads one line once written
    release = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        steps = _drive(tmp_path, env, hook)
        assert [s["kind"] for s in steps] == [str(step[0]) for step in STEPS]
        started = _wait_for_marks(marks, "started", 3)
        assert "ended" not in started  # every run still held when the last handler had returned
    finally:
        os.write(release, b"go\n" * 3)
    try:
        assert _wait_for_marks(marks, "ended", 3).count("ended") == 3
    finally:
        os.close(release)


def _wait_for_marks(marks: Path, word: str, count: int) -> list[str]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = marks.read_text().split() if marks.exists() else []
        if seen.count(word) >= count:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"{word} {count}x not seen in {marks}")


def test_outside_lich_the_plugin_spawns_nothing(tmp_path: Path) -> None:
    env = base_env(tmp_path)  # no LICH_* variables
    _drive(tmp_path, env)
    assert not Path(env["LICH_HOOK_LOG"]).exists()  # lich-hook never ran
