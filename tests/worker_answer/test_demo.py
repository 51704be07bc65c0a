from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from lich_hooks.commands import demo
from lich_hooks.commands.environment import Environment
from lich_hooks.commands.exit_codes import ExitCode


def test_demo_shows_a_worker_answering(tmp_path: Path) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    environment = Environment(
        stdout=stdout,
        stderr=stderr,
        environ=dict(os.environ),
        cwd=str(tmp_path),
        colour=False,
        stderr_colour=False,
        executable=sys.executable,
    )
    assert demo.run(environment) == ExitCode.OK
    assert stderr.getvalue() == ""
    lines = stdout.getvalue().splitlines()
    answer = (
        'lich received: POST /mod/answer {"session_id":"demo-card",'
        '"text":"Rewrote docs/cli.md; the tests pass."} -> 204'
    )
    assert any(line.strip() == answer for line in lines), "\n".join(lines)
    # the top-level session's Stop right before it answered nothing
    worker = next(i for i, line in enumerate(lines) if "a worker's turn ends" in line)
    top = next(i for i, line in enumerate(lines) if "not a worker" in line)
    assert top < worker
    assert lines[top + 2].strip() == "lich received: (nothing)"
