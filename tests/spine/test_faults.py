"""docs/transport.md: bad input and faults. The hook exits 0 with the harness's stdout and
an empty stderr whatever happens; the harness never waits on lich (the sender
is detached), and the sender itself gives up within its ~2 s deadline.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support import listeners
from tests.support.runner import LICH_HOOK, base_env, log_records, run_hook, wait_for_log

# Generous next to the 2 s deadline: the point is "bounded", not "fast".
SENDER_BUDGET_MS = 2500
RECORD_WAIT = 8.0

HOOKS = [
    ("PreInvocation antigravity", b"{}"),
    ("PreToolUse crush", b""),
    ("SessionStart claude", b""),
]


def _body(args: str) -> dict[str, object]:
    if "antigravity" in args:
        return {"conversationId": SID}
    return {"session_id": SID, "tool_name": "bash"}


# --- bad input ------------------------------------------------------------------

NINE_MIB = b'{"session_id": "' + b"x" * (9 * 1024 * 1024) + b'"}'

BAD_INPUT = {
    "empty": b"",
    "whitespace": b" \n\t ",
    "not json": b"session_id=abc",
    "truncated": b'{"session_id": "abc"',
    "trailing garbage": b'{"session_id": "abc"} x',
    "array": b'[{"session_id": "abc"}]',
    "string": b'"abc"',
    "number": b"42",
    "null": b"null",
    "non-utf8": b'{"session_id": "\xff\xfe"}',
    "latin-1": '{"session_id": "café"}'.encode("latin-1"),
    "deep nesting": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "over 8 MiB": NINE_MIB,
}


@pytest.mark.parametrize(("args", "stdout"), HOOKS)
@pytest.mark.parametrize("name", list(BAD_INPUT))
def test_bad_input_sends_nothing(
    name: str, args: str, stdout: bytes, lich: StandIn, lich_env: dict[str, str]
) -> None:
    ran = run_hook(args, BAD_INPUT[name], lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, stdout, b"")
    [record] = wait_for_log(lich_env, 1)
    assert record["decision"] == "bad-input"
    assert lich.received == []


def test_a_bom_and_surrounding_whitespace_are_still_json(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    raw = "\ufeff \n" + json.dumps({"session_id": SID}) + "\n"
    run_hook("SessionStart claude", raw.encode("utf-8"), lich_env)
    [request] = lich.wait(1)
    assert request.accepted is not None and request.accepted["provider_session_id"] == SID


def test_stdin_never_closed_gives_up_in_about_two_seconds(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    """Each harness's hook at once (they wait in parallel): all give up near 2 s."""
    procs = []
    started = time.monotonic()
    for args, _ in HOOKS:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", f"lich-hook {args}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=lich_env,
        )
        assert proc.stdin is not None
        proc.stdin.write(b'{"session_id": "never-closed"')  # a harness that never finishes
        proc.stdin.flush()
        procs.append(proc)
    try:
        for (_, stdout), proc in zip(HOOKS, procs, strict=True):
            assert proc.stdout is not None and proc.stderr is not None
            proc.wait(timeout=10)
            elapsed = time.monotonic() - started
            assert (proc.returncode, proc.stdout.read(), proc.stderr.read()) == (0, stdout, b"")
            assert 1.5 <= elapsed < 6, elapsed
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()  # stdin only now, after the hook is gone
    records = wait_for_log(lich_env, len(HOOKS))
    assert [r["decision"] for r in records] == ["bad-input"] * len(HOOKS)
    assert lich.received == []


# --- lich's environment ---------------------------------------------------------------


@pytest.mark.parametrize(
    "port", ["abc", "0", "70000", "80; x", " 80", "80 ", "+80", "-80", "0x50", "", "٨٠", "8080.0"]
)
def test_invalid_port_does_nothing(port: str, lich: StandIn, tmp_path: Path) -> None:
    env = base_env(tmp_path, **{**lich.env(), "LICH_PORT": port})
    ran = run_hook("PreInvocation antigravity", {"conversationId": SID}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"{}", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "outside-lich"
    assert "outcome" not in record


@pytest.mark.parametrize("name", ["LICH_TOKEN", "LICH_SESSION_ID", "LICH_PORT"])
@pytest.mark.parametrize("value", ["", None])
def test_empty_or_missing_variable_does_nothing(
    name: str, value: str | None, lich: StandIn, tmp_path: Path
) -> None:
    env = base_env(tmp_path, **lich.env())
    if value is None:
        del env[name]
    else:
        env[name] = value
    ran = run_hook("PreToolUse crush", {"session_id": SID}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "outside-lich"
    assert lich.received == []


# --- listeners that misbehave -----------------------------------------------------------


def _fault(
    listener: listeners.Listener, tmp_path: Path, args: str, stdout: bytes
) -> tuple[bool, dict[str, object]]:
    """Run one hook against `listener`; (did the harness return before the send ended, record)."""
    env = base_env(tmp_path, **listener.env())
    ran = run_hook(args, _body(args), env)
    returned_first = log_records(env) == []  # the sender writes the line when the send ends
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, stdout, b"")
    records = wait_for_log(env, 1, timeout=RECORD_WAIT)
    assert len(records) == 1, records
    record = records[0]
    assert record["decision"] == "report"
    send_ms = record["send_ms"]
    assert isinstance(send_ms, (int, float)) and send_ms <= SENDER_BUDGET_MS, record
    return returned_first, record


def test_hanging_listener(tmp_path: Path) -> None:
    with listeners.Hanging() as hanging:
        runs = []
        for n, (args, stdout) in enumerate(HOOKS):
            (tmp_path / str(n)).mkdir()
            env = base_env(tmp_path / str(n), **hanging.env())
            ran = run_hook(args, _body(args), env)
            # run_hook reads stdout and stderr to EOF, so it returns only once no
            # process holds them; the sender writes the log line when its send
            # ends. No line yet: the harness had its answer, and its pipes back,
            # while lich was still silent.
            assert log_records(env) == []
            assert (ran.returncode, ran.stdout, ran.stderr) == (0, stdout, b"")
            runs.append(env)
        for env in runs:
            [record] = wait_for_log(env, 1, timeout=RECORD_WAIT)
            assert record["outcome"] in ("failed", "deadline")
            send_ms = float(record["send_ms"])  # type: ignore[arg-type]
            assert send_ms <= SENDER_BUDGET_MS, record
        assert hanging.connections == len(HOOKS)


def test_trickling_listener_is_cut_by_the_absolute_deadline(tmp_path: Path) -> None:
    with listeners.Trickle(interval=0.2) as trickle:
        returned_first, record = _fault(trickle, tmp_path, "PreInvocation antigravity", b"{}")
    # Every byte arrives well inside any per-read timeout: only the deadline ends it.
    assert record["outcome"] == "deadline"
    assert 1500 <= float(record["send_ms"]) <= SENDER_BUDGET_MS  # type: ignore[arg-type]
    assert returned_first


@pytest.mark.parametrize(("args", "stdout"), HOOKS)
def test_resetting_listener(args: str, stdout: bytes, tmp_path: Path) -> None:
    with listeners.Reset() as reset:
        _, record = _fault(reset, tmp_path, args, stdout)
        assert reset.connections == 1
    assert record["outcome"] == "failed"


@pytest.mark.parametrize("status", [500, 400, 401])
@pytest.mark.parametrize(("args", "stdout"), HOOKS)
def test_refusing_listener(status: int, args: str, stdout: bytes, tmp_path: Path) -> None:
    with listeners.Status(status) as refusing:
        _, record = _fault(refusing, tmp_path, args, stdout)
        assert len(refusing.requests) == 1
    assert (record["outcome"], record["status"]) == ("refused", status)


@pytest.mark.parametrize(("args", "stdout"), HOOKS)
def test_nobody_listening(args: str, stdout: bytes, tmp_path: Path) -> None:
    env = base_env(
        tmp_path, LICH_PORT=str(listeners.closed_port()), LICH_TOKEN="t0k3n", LICH_SESSION_ID="c"
    )
    ran = run_hook(args, _body(args), env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, stdout, b"")
    [record] = wait_for_log(env, 1)
    assert record["outcome"] == "failed" and float(record["send_ms"]) <= SENDER_BUDGET_MS  # type: ignore[arg-type]


def test_redirects_are_not_followed(lich: StandIn, tmp_path: Path) -> None:
    with listeners.Status(307, b"") as redirecting:
        env = base_env(tmp_path, **redirecting.env())
        run_hook("SessionStart claude", {"session_id": SID}, env)
        [record] = wait_for_log(env, 1)
        assert redirecting.connections == 1
    assert (record["outcome"], record["status"]) == ("refused", 307)
    assert lich.received == []


def test_proxy_settings_are_ignored(lich: StandIn, tmp_path: Path) -> None:
    with listeners.CapturingProxy() as proxy:
        url = f"http://127.0.0.1:{proxy.port}"
        proxies = {
            name: url
            for name in (
                "HTTP_PROXY",
                "http_proxy",
                "HTTPS_PROXY",
                "https_proxy",
                "ALL_PROXY",
                "all_proxy",
            )
        }
        env = base_env(tmp_path, **lich.env(), **proxies, NO_PROXY="", no_proxy="")
        ran = run_hook("SessionStart codex", {"session_id": SID}, env)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
        [request] = lich.wait(1)
        [record] = wait_for_log(env, 1)
        assert record["outcome"] == "taken"
        assert proxy.connections == 0 and proxy.requests == []
    assert request.accepted is not None and request.accepted["provider"] == "codex"


def test_console_script_is_installed() -> None:
    assert LICH_HOOK.exists()


@pytest.mark.parametrize(("extra", "reported"), [(0, True), (1, False)], ids=["8 MiB", "8 MiB + 1"])
def test_the_size_limit_is_exactly_8_mib(
    extra: int, reported: bool, lich: StandIn, lich_env: dict[str, str]
) -> None:
    from lich_hooks.hook.payload import MAX_BYTES

    head = json.dumps({"session_id": SID}).encode()
    raw = head + b" " * (MAX_BYTES - len(head) + extra)
    run_hook("SessionStart codex", raw, lich_env)
    [record] = wait_for_log(lich_env, 1)
    assert record["decision"] == ("report" if reported else "bad-input")
    assert len(lich.received) == (1 if reported else 0)


def test_a_payload_written_in_slow_pieces_is_read_whole(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    raw = json.dumps({"session_id": SID, "tool_name": "bash"}).encode()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", "lich-hook PreToolUse crush"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=lich_env,
    )
    assert proc.stdin is not None
    for piece in (raw[:5], raw[5:20], raw[20:]):
        proc.stdin.write(piece)
        proc.stdin.flush()
        time.sleep(0.2)  # pacing the input like a slow harness, not synchronising
    out, err = proc.communicate(timeout=10)
    assert (proc.returncode, out, err) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.accepted is not None and request.accepted["provider"] == "crush"
