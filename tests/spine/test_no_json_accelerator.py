"""Without `_json` (PyPy, a CPython built without it) payloads still parse:
payload.loads_object falls back to `json`'s own decoder instead of calling
every payload "not JSON" and silently doing nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lich_hooks.hook import payload
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support.runner import wait_for_log

# The console script's own entry point, in an interpreter where `import _json` fails.
WITHOUT_JSON = (
    "import sys; sys.modules['_json'] = None; "
    "sys.argv = ['lich-hook', *sys.argv[1:]]; "
    "from lich_hooks.cli import main; sys.exit(main())"
)


def run_without_json(args: list[str], data: bytes, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_JSON, *args],
        input=data,
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_session_start_reports_without_json_accelerator(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    body = json.dumps({"session_id": SID, "tool_name": "bash"}).encode()
    for n in (1, 2):
        assert run_without_json(["PreToolUse", "crush"], body, lich_env) == (0, b"", b"")
        wait_for_log(lich_env, n)
    assert [r["decision"] for r in wait_for_log(lich_env, 2)] == ["report", "already-reported"]
    assert [r.accepted for r in lich.received] == [
        {"session_id": "card-1", "provider_session_id": SID, "provider": "crush"}
    ]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, -3e2, true, false, null, "\\u00e9\\ud83d\\ude00"], "b": {}}',
        '  \n{"session_id": "x"}\t ',
        "\ufeff{}",
        '{"n": NaN, "i": -Infinity}',
        "[1]",
        '{"a": 1} trailing',
        '{"a": 1',
        "",
        '"text"',
    ],
)
def test_the_fallback_parses_exactly_like_the_scanner(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = text.encode("utf-8")
    with_scanner = payload.loads_object(data)
    monkeypatch.setitem(sys.modules, "_json", None)
    monkeypatch.setattr(payload, "_scan", None)
    assert repr(payload.loads_object(data)) == repr(with_scanner)
    if with_scanner is not None:
        assert repr(with_scanner) == repr(json.loads(text.lstrip("\ufeff")))


def test_nothing_else_on_the_hot_path_needs_json_accelerator(tmp_path: Path) -> None:
    """A Crush call outside lich: exit 0, silent, with `_json` unavailable."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    assert run_without_json(["PreToolUse", "crush"], b'{"session_id": "x"}', env) == (0, b"", b"")
