"""docs/harnesses.md: what each harness reads on stdout, on every path.

The table lives in tests/spine/helpers.py, written from docs/harnesses.md rather than
read from lich_hooks.base.harnesses. Each (harness, event) runs on four paths: outside
lich, bad input, lich down, lich up; plus the internal-error path, which no
outside input reaches (every I/O failure is handled where it happens), so it is
driven in-process with an environment whose values are of the wrong type.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lich_hooks.hook import run as hook
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import EVENTS, REPORTING, UNREGISTERED, expected_stdout, payload
from tests.support.listeners import closed_port
from tests.support.runner import (
    Stdin,
    base_env,
    log_records,
    run_hook,
    wait_for_log,
    watch_log,
)


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("provider", list(REPORTING))
def test_stdout_on_every_path(provider: str, event: str, tmp_path: Path, lich: StandIn) -> None:
    expected = expected_stdout(provider, event)
    good = payload(provider, event)
    for name in ("outside", "bad", "down", "up"):
        (tmp_path / name).mkdir()
    paths: dict[str, tuple[dict[str, str], Stdin]] = {
        "outside lich": (base_env(tmp_path / "outside"), good),
        "bad input": (base_env(tmp_path / "bad", **lich.env()), b"{not json"),
        "lich down": (
            base_env(tmp_path / "down", **{**lich.env(), "LICH_PORT": str(closed_port())}),
            good,
        ),
        "lich up": (base_env(tmp_path / "up", **lich.env()), good),
    }
    for name, (env, body) in paths.items():
        ran = run_hook(f"{event} {provider}", body, env)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, expected, b""), name
        [record] = wait_for_log(env, 1)
        assert record["event"] == event and record["provider"] == provider, name
        assert record["decision"] != "internal-error", (name, record)


def test_module_harness_ids_see_silence(env: dict[str, str]) -> None:
    for provider in UNREGISTERED:
        for event in ("SessionStart", "PreToolUse", "PreInvocation", "Stop"):
            ran = run_hook(f"{event} {provider}", {"session_id": "x"}, env)
            assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")


def _run_in_process(
    event: str, provider: str, environ: dict[str, object], tmp_path: Path
) -> tuple[int, bytes]:
    stdin_r, stdin_w = os.pipe()
    os.write(stdin_w, b'{"session_id": "x", "conversationId": "x"}')
    os.close(stdin_w)
    out = tmp_path / "stdout"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        code = hook.run(event, provider, environ, stdin_fd=stdin_r, stdout_fd=fd)  # type: ignore[arg-type]
    finally:
        os.close(fd)
        os.close(stdin_r)
    return code, out.read_bytes()


@pytest.mark.expects_internal_error
@pytest.mark.parametrize(
    ("provider", "event"),
    [
        # every (harness, event) that runs a job; the others never reach one
        ("antigravity", "PreInvocation"),
        ("crush", "PreToolUse"),
        ("claude", "SessionStart"),
        ("claude", "Stop"),
        ("claude", "PreToolUse"),
        ("codex", "SessionStart"),
    ],
)
def test_internal_error_keeps_the_harness_stdout(
    provider: str, event: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "hook.log"
    # A port that is not a string breaks the job's environment parsing: the one
    # way to make a job raise without faking our own code.
    environ: dict[str, object] = {
        "LICH_PORT": 4242,
        "LICH_TOKEN": "secret-token-1234",
        "LICH_SESSION_ID": "c",
        "LICH_HOOK_LOG": str(log),
        "LICH_HOOK_STATE_DIR": str(tmp_path / "state"),
    }
    watch_log(log)
    code, stdout = _run_in_process(event, provider, environ, tmp_path)
    assert (code, stdout) == (0, expected_stdout(provider, event))
    [record] = log_records({"LICH_HOOK_LOG": str(log)})
    assert record["decision"] == "internal-error"
    assert str(record["error"]).startswith("TypeError")
    assert capfd.readouterr().err == ""


def test_a_closed_stdout_is_not_an_error(lich: StandIn, lich_env: dict[str, str]) -> None:
    # The harness stopped listening before we answered: still exit 0, still report.
    ran = run_hook("PreInvocation antigravity >&-", {"conversationId": "x"}, lich_env)
    assert (ran.returncode, ran.stderr) == (0, b"")
    [request] = lich.wait(1)
    assert request.status == 204


def test_a_closed_stdin_is_bad_input(lich: StandIn, lich_env: dict[str, str]) -> None:
    ran = run_hook("PreInvocation antigravity <&-", None, lich_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"{}", b"")
    [record] = wait_for_log(lich_env, 1)
    assert record["decision"] == "bad-input"
    assert lich.received == []
