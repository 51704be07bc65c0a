"""The detached sender against listeners that misbehave (docs/troubleshooting.md,
docs/performance.md): whatever the listener does, the harness has its answer at
once, the sender is done within its one ~2 s deadline (measured on the wall
clock, from the hook's spawn to the sender's log line and its exit), the run
writes one log line, redirects are never followed and proxies never used.

tests/spine/test_faults.py has the first faults (hang, trickle, reset, refusals,
nobody listening); this file has the rest, and the inline path taken where
fork does not exist.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support import listeners
from tests.support.nofork import no_fork_env
from tests.support.runner import (
    Ran,
    base_env,
    log_records,
    run_hook,
    start_seconds,
    wait_for_log,
)

# The deadline is 2.0 s; the slack is for a busy machine, not for the sender. A bound that
# counts a hook's process start counts it as measured beside it (runner.start_seconds).
DEADLINE_WALL = 2.6
PROMPT_MS = 1000  # an answer that needs no deadline: it ends as soon as the status is known
RECORD_WAIT = 8.0

WORKER = {
    "LICH_SUBAGENT_DEPTH": "1",
    "CLAUDE_CODE_SESSION_ATTENDED": "1",
    "CLAUDE_CODE_ENTRYPOINT": "cli",
}


class Sent:
    """One reporting hook run: what the harness saw, and how its sender ended."""

    def __init__(
        self, ran: Ran, record: dict[str, object], done_after: float, spawned: float
    ) -> None:
        self.ran = ran
        self.record = record
        self.done_after = done_after  # seconds from the hook's start to the sender's log line
        self.spawned = spawned  # time.monotonic() when the hook was spawned

    @property
    def outcome(self) -> object:
        return self.record["outcome"]

    @property
    def send_ms(self) -> float:
        return float(self.record["send_ms"])  # type: ignore[arg-type]


def _gone(pid: int, timeout: float = 2.0) -> bool:
    """The process has exited (gone, or a zombie nobody reaped yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read()
        except OSError:
            return True
        if fields[fields.rindex(")") + 2] in "ZX":
            return True
        time.sleep(0.01)
    return False


def send(
    tmp_path: Path,
    port_env: dict[str, str],
    args: str = "SessionStart claude",
    payload: dict[str, object] | None = None,
    extra: dict[str, str] | None = None,
) -> Sent:
    """Run one reporting hook against a listener; check the harness side, time the sender."""
    env = base_env(tmp_path, **port_env, **(extra or {}))
    start = start_seconds()
    spawned, monotonic = time.time(), time.monotonic()
    ran = run_hook(args, payload or {"session_id": SID}, env)
    stdout = b"{}" if "antigravity" in args else b""
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, stdout, b"")
    assert ran.seconds - start < 1.0, "the harness waited on the sender"
    [record] = wait_for_log(env, 1, timeout=RECORD_WAIT)
    assert record["decision"] in ("report", "answer")
    done_after = float(record["ts"]) - spawned - start  # type: ignore[arg-type]
    assert done_after <= DEADLINE_WALL, record
    if os.path.isdir("/proc"):
        assert _gone(int(record["pid"])), "the sender outlived its log line"  # type: ignore[call-overload]
    assert len(log_records(env)) == 1, "one run, one log line"
    return Sent(ran, record, done_after, monotonic + start)


def _respond(*pieces: bytes) -> listeners.Scripted:
    return listeners.Scripted(lambda: pieces)


# --- interim answers --------------------------------------------------------------------------


def test_interim_answers_are_skipped_and_the_final_204_is_taken(tmp_path: Path) -> None:
    """100 Continue and 103 Early Hints come before the real answer; the 204 counts
    (Crush records the id, so its next call costs no request), and the sender does
    not wait for the listener to close the connection."""
    with listeners.Scripted(
        lambda: [
            b"HTTP/1.1 100 Continue\r\n\r\n",
            b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n",
            b"HTTP/1.1 204 No Content\r\n\r\n",
        ],
        interval=0.05,
    ) as lich:
        sent = send(tmp_path, lich.env(), "PreToolUse crush", {"session_id": SID})
        assert (sent.outcome, sent.record["status"]) == ("taken", 204)
        assert sent.send_ms < PROMPT_MS
        env = base_env(tmp_path, **lich.env())
        run_hook("PreToolUse crush", {"session_id": SID}, env)
        assert wait_for_log(env, 2)[-1]["decision"] == "already-reported"
        assert lich.connections == 1


@pytest.mark.parametrize("interim", [b"100 Continue", b"102 Processing", b"103 Early Hints"])
def test_endless_interim_answers_end_at_the_deadline(interim: bytes, tmp_path: Path) -> None:
    with listeners.Scripted(
        lambda: itertools.repeat(b"HTTP/1.1 " + interim + b"\r\n\r\n"), interval=0.1
    ) as lich:
        sent = send(tmp_path, lich.env())
    assert sent.outcome == "deadline"
    assert 1900 <= sent.send_ms <= DEADLINE_WALL * 1000


# --- trickling (slowloris) --------------------------------------------------------------------


def test_headers_that_trickle_forever_end_at_the_deadline(tmp_path: Path) -> None:
    """Each header line comes well inside any per-read timeout; only the absolute deadline
    stops a sender from waiting for the end of the head."""

    def slow_headers() -> Iterator[bytes]:
        yield b"HTTP/1.1 204 No Content\r\n"
        for n in itertools.count():
            yield b"X-Slow-%d: y\r\n" % n

    with listeners.Scripted(slow_headers, interval=0.2) as lich:
        sent = send(tmp_path, lich.env())
        [closed] = lich.wait_closed(1)
    assert sent.outcome == "deadline"
    assert 1900 <= sent.send_ms <= DEADLINE_WALL * 1000
    assert closed - sent.spawned <= DEADLINE_WALL + 0.3  # the listener saw the sender go


def test_a_body_that_trickles_is_not_waited_for(tmp_path: Path) -> None:
    def slow_body() -> Iterator[bytes]:
        yield b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1000\r\n\r\n"
        yield from itertools.repeat(b"x")

    with listeners.Scripted(slow_body, interval=0.2) as lich:
        sent = send(tmp_path, lich.env())
    assert (sent.outcome, sent.record["status"]) == ("refused", 500)
    assert sent.send_ms < PROMPT_MS


# --- big, endless, odd answers ----------------------------------------------------------------


def _huge() -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n"
    yield from itertools.repeat(b"x" * 65536)


def _chunked() -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    yield from itertools.repeat(b"4\r\nabcd\r\n")


def _endless_head() -> Iterator[bytes]:
    yield b"HTTP/1.1 204 No Content\r\n"
    yield from itertools.repeat(b"X-Endless: " + b"y" * 1000 + b"\r\n")


@pytest.mark.parametrize(
    ("script", "outcome", "status", "error"),
    [
        (_huge, "refused", 200, None),
        (_chunked, "refused", 200, None),
        (_endless_head, "failed", None, "bad-response"),
        (lambda: [b"\x00\xff garbage not http\r\n\r\n"], "failed", None, "bad-response"),
        (
            lambda: [b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello"],
            "taken",
            204,
            None,
        ),
        (lambda: [b"HTTP/1.0 204 No Content\r\n\r\n"], "taken", 204, None),
    ],
    ids=["huge body", "endless chunked body", "endless head", "garbage", "204 with body", "1.0"],
)
def test_answers_that_never_end_or_are_not_http(
    script: listeners.Script, outcome: str, status: int | None, error: str | None, tmp_path: Path
) -> None:
    with listeners.Scripted(script) as lich:
        sent = send(tmp_path, lich.env())
    assert (sent.outcome, sent.record["status"], sent.record["error"]) == (outcome, status, error)
    assert sent.send_ms < PROMPT_MS


def test_a_listener_that_never_reads_a_big_answer(tmp_path: Path) -> None:
    """A worker's answer near lich's 64 KiB limit, to a listener that reads nothing."""
    with listeners.Silent() as lich:
        sent = send(
            tmp_path,
            lich.env(),
            "Stop claude",
            {"session_id": SID, "last_assistant_message": "x" * 60_000, "background_tasks": []},
            WORKER,
        )
    assert sent.outcome == "deadline"
    assert 1900 <= sent.send_ms <= DEADLINE_WALL * 1000


def test_a_hanging_listener_costs_exactly_the_deadline(tmp_path: Path) -> None:
    with listeners.Hanging() as lich:
        sent = send(tmp_path, lich.env(), "PreInvocation antigravity", {"conversationId": SID})
    assert sent.outcome == "deadline"
    assert 1900 <= sent.send_ms <= DEADLINE_WALL * 1000


# --- redirects and proxies --------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirects_are_never_followed(status: int, lich: StandIn, tmp_path: Path) -> None:
    """The Location is lich itself, token and all: following it would be taken there."""
    location = f"http://127.0.0.1:{lich.port}/session-start?token={lich.token}"
    answer = (
        f"HTTP/1.1 {status} Moved\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
    ).encode()
    with _respond(answer) as redirecting:
        sent = send(tmp_path, redirecting.env(token=lich.token))
        assert redirecting.connections == 1
    assert (sent.outcome, sent.record["status"]) == ("refused", status)
    assert sent.send_ms < PROMPT_MS
    assert lich.received == []


PROXY_VARIABLES = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY"]


@pytest.mark.parametrize(
    "variables",
    [[name] for name in PROXY_VARIABLES] + [PROXY_VARIABLES],
    ids=[*PROXY_VARIABLES, "all"],
)
@pytest.mark.parametrize("no_proxy", [None, "", "example.com", "*"])
def test_proxy_variables_never_see_the_report(
    variables: list[str], no_proxy: str | None, lich: StandIn, tmp_path: Path
) -> None:
    with listeners.CapturingProxy() as proxy:
        proxies = {name: f"http://127.0.0.1:{proxy.port}" for name in variables}
        if no_proxy is not None:
            proxies.update(NO_PROXY=no_proxy, no_proxy=no_proxy)
        sent = send(tmp_path, lich.env(), extra=proxies)
        [request] = lich.wait(1)
        assert proxy.connections == 0 and proxy.requests == []
    assert sent.outcome == "taken" and request.status == 204


# --- the token stays out of argv and the log --------------------------------------------------


def test_the_token_is_in_no_argv_and_no_log_line(tmp_path: Path) -> None:
    token = "SeCrEt-t0ken/with spaces&more"
    with listeners.Hanging() as hanging:
        env = base_env(tmp_path, **hanging.env(token=token), LICH_HOOK_DEBUG="1")
        ran = run_hook("SessionStart claude", {"session_id": SID}, env)
        assert hanging.wait(1) == 1
        # the sender is still waiting on the hanging listener: look at every process now
        cmdlines = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    cmdlines.append(cmdline.read())
            except OSError:
                continue
        looked = time.time()
        [record] = wait_for_log(env, 1, timeout=RECORD_WAIT)
    assert record["outcome"] == "deadline"
    assert looked < float(record["ts"]), "looked too late: the sender may have been gone"  # type: ignore[arg-type]
    assert not any(token.encode() in line for line in cmdlines)
    for form in (token, "SeCrEt-t0ken%2Fwith%20spaces%26more"):
        assert form not in Path(env["LICH_HOOK_LOG"]).read_text()
        assert form.encode() not in ran.stderr


# --- where fork does not exist (Windows): the send runs inline --------------------------------


def test_without_fork_the_report_is_sent_inline(lich: StandIn, tmp_path: Path) -> None:
    env = no_fork_env(tmp_path, base_env(tmp_path, **lich.env("card-inline")))
    ran = run_hook("SessionStart codex", {"session_id": SID}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    # inline: the report was in before the hook exited, and so was its one log line
    assert len(lich.received) == 1 and lich.received[0].status == 204
    [record] = log_records(env)
    assert (record["outcome"], record["status"]) == ("taken", 204)


def test_without_fork_a_hanging_listener_holds_the_hook_only_until_the_deadline(
    tmp_path: Path,
) -> None:
    with listeners.Hanging() as hanging:
        env = no_fork_env(tmp_path, base_env(tmp_path, **hanging.env()))
        start = start_seconds()
        ran = run_hook("PreInvocation antigravity", {"conversationId": SID}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"{}", b"")
    assert 1.9 <= ran.seconds <= start + DEADLINE_WALL  # python's start and exit on top
    [record] = log_records(env)
    assert record["outcome"] == "deadline"
