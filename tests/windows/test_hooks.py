"""Every hook job on the official Windows CPython (under Wine), run as a harness runs it there.

Each harness on Windows hands its registration's command to a shell: Codex to
`%COMSPEC% /C`, so these run `cmd.exe /C lich-hook <event> <provider>` with
the payload on stdin, against the same stand-in listener and contract
vectors as the Linux suite. Windows has no fork: the send runs inline, inside
the same deadline (docs/transport.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lich_hooks.base.harnesses import default_stdout
from lich_hooks.human.standin.server import StandIn
from tests.agent_cards.fake_lich import PROGRAM, Deny, FakeLich, agent_payload, session
from tests.spine.helpers import REPORTING, SID, payload
from tests.support import listeners
from tests.support.contract_check import assert_client_body
from tests.support.runner import log_records
from tests.windows import wine
from tests.windows.conftest import windows_env

HOOK = "cmd.exe /C lich-hook"
SENDER_BUDGET_MS = 2500


def _log(tmp_path: Path) -> list[dict[str, object]]:
    return log_records({"LICH_HOOK_LOG": str(tmp_path / "hook.log")})


def test_outside_lich_every_job_is_silent(
    windows: wine.Windows, win_env: dict[str, str], tmp_path: Path
) -> None:
    jobs = [
        ("SessionStart claude", payload("claude", "SessionStart"), b""),
        ("SessionStart codex", payload("codex", "SessionStart"), b""),
        ("PreToolUse crush", payload("crush", "PreToolUse"), b""),
        ("PreInvocation antigravity", payload("antigravity", "PreInvocation"), b"{}"),
        ("Stop claude", payload("claude", "Stop"), b""),
    ]
    results = windows.run([wine.spec(f"{HOOK} {args}", body, win_env) for args, body, _ in jobs])
    for (args, _, stdout), ran in zip(jobs, results, strict=True):
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, stdout, b""), args
    assert [r["decision"] for r in _log(tmp_path)] == ["outside-lich"] * 5


@pytest.mark.parametrize("provider", ["claude", "codex", "antigravity", "crush"])
def test_a_card_reports_its_session(
    provider: str, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """Codex here runs the hook as its own child (cmd.exe from this harness, no codex above):
    the hook's own LICH_* are the card's."""
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    event = REPORTING[provider]
    ran = windows.one(**wine.spec(f"{HOOK} {event} {provider}", payload(provider, event), env))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, default_stdout(provider, event), b"")
    [request] = lich.wait(1)
    assert request.status == 204
    assert assert_client_body("session-start", request.body) == {
        "session_id": "card-1",
        "provider_session_id": SID,
        "provider": provider,
    }
    [record] = _log(tmp_path)
    assert record["decision"] == "report"


@pytest.mark.parametrize("provider", ["antigravity", "crush"])
def test_dedupe_holds_in_the_windows_state_directory(
    provider: str, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    event = REPORTING[provider]
    run = wine.spec(f"{HOOK} {event} {provider}", payload(provider, event), env)
    ran = windows.run([run, run, run])
    quiet = (0, default_stdout(provider, event), b"")
    assert [(r.returncode, r.stdout, r.stderr) for r in ran] == [quiet] * 3, ran
    assert [r["decision"] for r in _log(tmp_path)] == [
        "report",
        "already-reported",
        "already-reported",
    ]
    assert len(lich.received) == 1
    # the record lives where docs/harnesses.md says: %LOCALAPPDATA%\lich-hooks
    state = tmp_path / "home" / "AppData" / "Local" / "lich-hooks"
    assert state.is_dir(), sorted(p.name for p in (tmp_path / "home").rglob("*"))


def test_a_worker_answers(windows: wine.Windows, lich: StandIn, tmp_path: Path) -> None:
    env = windows_env(
        windows,
        tmp_path,
        **lich.env("card-w"),
        LICH_SUBAGENT_DEPTH="1",
        CLAUDE_CODE_SESSION_ATTENDED="1",
    )
    body = payload("claude", "Stop") | {"last_assistant_message": "Rewrote docs/cli.md."}
    ran = windows.one(**wine.spec(f"{HOOK} Stop claude", body, env))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert assert_client_body("mod/answer", request.body) == {
        "session_id": "card-w",
        "text": "Rewrote docs/cli.md.",
    }


@pytest.mark.parametrize(
    "stdin",
    [b"", b"not json", b"[1, 2]", b"\xff\xfe\x00garbage"],
    ids=["empty", "text", "array", "bytes"],
)
def test_bad_input_sends_nothing_and_says_so_in_the_log(
    stdin: bytes, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    ran = windows.one(**wine.spec(f"{HOOK} SessionStart claude", stdin, env))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = _log(tmp_path)
    assert record["decision"] == "bad-input"
    assert lich.received == []


def test_a_hanging_listener_costs_the_inline_send_its_deadline_only(
    windows: wine.Windows, tmp_path: Path
) -> None:
    """No fork on Windows: the harness waits for the send, and never past its deadline."""
    with listeners.Hanging() as hanging:
        env = windows_env(windows, tmp_path, **hanging.env())
        body = payload("claude", "SessionStart")
        ran = windows.one(**wine.spec(f"{HOOK} SessionStart claude", body, env))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = _log(tmp_path)
    assert record["outcome"] in ("failed", "deadline"), record
    assert float(record["send_ms"]) <= SENDER_BUDGET_MS, record  # type: ignore[arg-type]
    # what the harness waited, the Windows Python's start under Wine included (seconds on a
    # busy machine): a listener that never answers would otherwise hold it to its timeout
    assert ran.seconds < 10, ran.seconds
    assert hanging.connections == 1


def test_an_agent_call_becomes_a_card_with_a_windows_lich(
    windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """Claude Code's Agent call in a top-level card: `lich open` (a Windows `lich.exe`
    stand-in, pip's launcher around tests/agent_cards/fake_lich.py's program) takes the
    task, and Claude Code is told so in a deny."""
    fake = FakeLich(tmp_path)
    exe = fake.dir / "lich.exe"
    exe.write_bytes(wine.launcher(PROGRAM.encode()))
    project = tmp_path / "project"
    project.mkdir()
    where = windows.path(project)
    fake.script(open={"json": session("pending", path=where)})
    env = windows_env(
        windows,
        tmp_path,
        **lich.env("card-1"),
        LICH_BIN=windows.path(exe),
        FAKE_LICH_CALLS=windows.path(fake.calls_path),
        FAKE_LICH_SCRIPT=windows.path(fake.script_path),
        LICH_SUBAGENT_DEPTH="0",
        CLAUDE_CODE_SESSION_ATTENDED="1",
        CLAUDE_CODE_ENTRYPOINT="cli",
    )
    body = agent_payload(where, model="haiku")
    ran = windows.one(**wine.spec(f"{HOOK} PreToolUse claude", body, env, cwd=where))
    assert (ran.returncode, ran.stderr) == (0, b""), ran
    [call] = fake.calls()
    assert call["argv"] == [
        *("open", "--kind", "claude", "--subagent", "--model", "haiku"),
        *("--prompt", "Find and fix the login bug.", "--json"),
    ]
    assert str(call["cwd"]).lower() == where.lower()
    deny = Deny(ran.stdout)
    assert deny.person == (
        'lich is running this task as card "Fix login"; its report will come back here.'
    )
    assert f"({where})" in deny.model
