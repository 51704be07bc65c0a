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
import shutil
import subprocess
from pathlib import Path

import pytest

from lich_hooks.human.settings import modules
from lich_hooks.human.settings.registry import MODULES
from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import LICH_HOOK, base_env, wait_for_log

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")

# The driver: load the plugin with a stand-in opencode client, play the steps, time each handler.
# Its reference: the quickest of three awaited lich-hook runs outside lich (they do nothing),
# the least a handler that waited for its spawn would take on this machine right now.
DRIVER = """
const [plugin, sessions, steps, hook] = process.argv.slice(2)
const { spawn } = await import("node:child_process")
const bare = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LICH_")))
let reference = Infinity
for (let i = 0; i < 3; i++) {
  const started = performance.now()
  const run = spawn(hook, ["SessionStart", "opencode"], { env: bare, stdio: "ignore" })
  await new Promise((resolve) => run.on("exit", resolve))
  reference = Math.min(reference, performance.now() - started)
}
console.log(JSON.stringify({ kind: "reference", ms: reference }))
const known = JSON.parse(sessions)
const client = { session: { get: async ({ path: { id } }) => {
  if (id === "ses_broken") throw new Error("lookup failed")
  return { data: id in known ? { id, parentID: known[id] ?? undefined } : undefined }
} } }
const { LichHooks } = await import(plugin)
const hooks = await LichHooks({ client })
for (const [kind, arg] of JSON.parse(steps)) {
  const started = performance.now()
  if (kind === "created") {
    hooks.event({ event: { type: "session.created", properties: { info: arg } } })
  } else {
    await hooks["chat.message"]({ sessionID: arg }, {})
  }
  console.log(JSON.stringify({ kind, ms: performance.now() - started }))
  await new Promise((resolve) => setTimeout(resolve, 0)) // let a lookup answer, as opencode would
}
"""

ROOT, CHILD, CONTINUED = "ses_root1", "ses_child1", "ses_continued1"
SESSIONS = {ROOT: None, CHILD: ROOT, CONTINUED: None}
STEPS = [
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


def _drive(tmp: Path, env: dict[str, str]) -> list[dict[str, object]]:
    plugin = tmp / "lich-hooks.mjs"
    plugin.write_text(modules.render(MODULES["opencode"].template, str(LICH_HOOK)))
    driver = tmp / "driver.mjs"
    driver.write_text(DRIVER)
    ran = subprocess.run(
        ["node", str(driver), str(plugin), json.dumps(SESSIONS), json.dumps(STEPS), str(LICH_HOOK)],
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
    timings = _drive(tmp_path, env)
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
    # chat.message is awaited by opencode: the handler returns without waiting on anything,
    # quicker than any lich-hook run it could have waited for
    quick = [float(str(t["ms"])) for t in timings if t["kind"] == "chat"]
    [reference] = [float(str(t["ms"])) for t in timings if t["kind"] == "reference"]
    assert max(quick) < reference, timings


def test_outside_lich_the_plugin_spawns_nothing(tmp_path: Path) -> None:
    env = base_env(tmp_path)  # no LICH_* variables
    _drive(tmp_path, env)
    assert not Path(env["LICH_HOOK_LOG"]).exists()  # lich-hook never ran
