"""docs/troubleshooting.md debugging: LICH_HOOK_DEBUG lines on stderr, LICH_HOOK_LOG one JSON
line per run, and the token in neither, raw or URL-encoded."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import pytest

from lich_hooks.base.runlog import RunLog
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support import listeners
from tests.support.runner import Stdin, base_env, log_records, run_hook, wait_for_log

TOKEN = 'tok&en=+ /"\\ü-' + "s3cr3t"

RUNS: list[tuple[str, Stdin, str]] = [
    ("SessionStart claude", {"session_id": SID}, "report"),
    ("PreToolUse crush", {"session_id": SID}, "report"),
    ("PreInvocation antigravity", b"not json", "bad-input"),
    ("PreInvocation antigravity", {"nothing": 1}, "no-session-id"),
    ("NoSuchEvent codex", {"session_id": SID}, "unknown-event"),
    ("PostToolUse antigravity", {"conversationId": SID}, "no-job"),
]


def _assert_no_token(text: str) -> None:
    for form in (TOKEN, quote(TOKEN, safe=""), quote(TOKEN), json.dumps(TOKEN)[1:-1], "s3cr3t"):
        assert form not in text, form


@pytest.mark.parametrize("debug", ["1", "yes"])
def test_debug_lines_on_stderr_and_one_log_line_per_run(debug: str, tmp_path: Path) -> None:
    with StandIn(token=TOKEN) as lich:
        env = base_env(tmp_path, **lich.env(), LICH_HOOK_DEBUG=debug)
        stderr = b""
        for n, (args, body, _) in enumerate(RUNS, start=1):
            ran = run_hook(args, body, env)
            assert ran.returncode == 0
            assert ran.stderr.startswith(b"lich-hook: "), ran.stderr
            stderr += ran.stderr
            wait_for_log(env, n)
        assert len(lich.received) == 2
    records = log_records(env)
    assert [r["decision"] for r in records] == [decision for _, _, decision in RUNS]
    for record in records:
        assert {"ts", "pid", "event", "provider", "decision", "ms"} <= record.keys()
    assert [r["outcome"] for r in records[:2]] == ["taken", "taken"]
    raw = Path(env["LICH_HOOK_LOG"]).read_text(encoding="utf-8")
    assert raw.count("\n") == len(RUNS)
    _assert_no_token(raw)
    _assert_no_token(stderr.decode("utf-8", "replace"))


@pytest.mark.parametrize("debug", [None, "", "0", "false", "no", "off"])
def test_no_stderr_without_debug(debug: str | None, lich: StandIn, tmp_path: Path) -> None:
    env = base_env(tmp_path, **lich.env())
    if debug is not None:
        env["LICH_HOOK_DEBUG"] = debug
    for args, body, _ in RUNS:
        assert run_hook(args, body, env).stderr == b""


def test_token_never_logged_when_lich_refuses_it(tmp_path: Path) -> None:
    with listeners.Status(401, b"bad token " + TOKEN.encode()) as refusing:
        env = base_env(tmp_path, **refusing.env(token=TOKEN), LICH_HOOK_DEBUG="1")
        ran = run_hook("SessionStart claude", {"session_id": SID}, env)
        [record] = wait_for_log(env, 1)
    assert record["status"] == 401
    _assert_no_token(Path(env["LICH_HOOK_LOG"]).read_text(encoding="utf-8"))
    _assert_no_token(ran.stderr.decode("utf-8", "replace"))


def test_log_without_debug_and_an_unwritable_log(lich: StandIn, tmp_path: Path) -> None:
    env = base_env(tmp_path, **lich.env(), LICH_HOOK_LOG=str(tmp_path))  # a directory
    ran = run_hook("SessionStart claude", {"session_id": SID}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.status == 204
    (tmp_path / "h").mkdir()
    no_log = base_env(tmp_path / "h", **lich.env())
    del no_log["LICH_HOOK_LOG"]
    assert run_hook("SessionStart claude", {"session_id": SID}, no_log).stderr == b""


@pytest.mark.parametrize("token", ['quo"te', "back\\slash", "a,b:c}", "t", "tok en+/?&=", "ü令"])
def test_run_log_scrubs_every_form_and_stays_json(token: str, tmp_path: Path) -> None:
    path = tmp_path / "log"
    log = RunLog({"LICH_TOKEN": token, "LICH_HOOK_LOG": str(path)})
    log.set(
        decision="report",
        error=f"failed for {token} and {quote(token, safe='')}",
        nested={"url": f"?token={quote(token, safe='')}", "list": [token]},
    )
    log.write()
    line = path.read_text(encoding="utf-8")
    record = json.loads(line)  # still one valid JSON line, whatever the token holds
    assert record["error"] == "failed for <token> and <token>"
    assert record["nested"]["list"] == ["<token>"]
    if token not in "?token=":  # a one-letter token is scrubbed out of our own words too
        assert record["nested"]["url"] == "?token=<token>"
    if len(token) > 1:
        assert token not in json.dumps(record, ensure_ascii=False).replace("<token>", "")


def test_undecodable_token_bytes_still_give_a_log_line(lich: StandIn, tmp_path: Path) -> None:
    env: dict[str, str] = base_env(tmp_path, **lich.env())
    env["LICH_TOKEN"] = b"ab\xffcd".decode("utf-8", "surrogateescape")
    ran = run_hook("SessionStart claude", {"session_id": SID}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "report"
    [request] = lich.wait(1)
    assert request.path.endswith("?token=ab%FFcd")  # sent byte for byte (lich judges it)


def test_a_log_fifo_nobody_reads_does_not_block_the_hook(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    env = base_env(tmp_path, LICH_HOOK_LOG=str(fifo))
    ran = run_hook("PreToolUse antigravity", {"conversationId": SID}, env, timeout=10)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b'{"decision":"allow"}', b"")
