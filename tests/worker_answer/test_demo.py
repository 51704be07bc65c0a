"""`lich-hook demo` (docs/troubleshooting.md): a person reads what happened in words; the bytes
behind each line come with --verbose; any misbehaving run makes it fail."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from lich_hooks.human.commands import demo
from lich_hooks.human.commands.environment import Environment, ExitCode
from lich_hooks.human.settings.scenarios import Scenario


def _run(tmp_path: Path, **options: object) -> tuple[ExitCode, list[str], str]:
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
    code = demo.run(environment, **options)  # type: ignore[arg-type]
    return code, stdout.getvalue().splitlines(), stderr.getvalue()


def test_demo_shows_a_worker_answering_in_words(tmp_path: Path) -> None:
    code, lines, err = _run(tmp_path)
    assert (code, err) == (ExitCode.OK, "")
    answer = (
        'lich received: card demo-card\'s answer, "Rewrote docs/cli.md; the tests pass." (taken)'
    )
    assert any(line.strip() == answer for line in lines), "\n".join(lines)
    # the top-level session's Stop right before it answered nothing
    worker = next(i for i, line in enumerate(lines) if "A worker's turn ends" in line)
    top = next(i for i, line in enumerate(lines) if "it is no worker" in line)
    assert top < worker
    assert lines[top + 1].strip() == "lich received: nothing"
    # no protocol trace by default: no request bodies, no payloads, no raw stdout
    assert not [line for line in lines if '{"' in line or "POST /" in line], "\n".join(lines)


def test_demo_shows_the_card_moment_as_each_reader_gets_it(tmp_path: Path) -> None:
    """docs/agent-cards.md: the person's line, the error line both read, the model's part."""
    _, lines, _ = _run(tmp_path)
    at = next(i for i, line in enumerate(lines) if "general-purpose subagent" in line)
    block = [line.strip() for line in lines[at + 1 : at + 6]]
    assert block[0].startswith('lich received: a request to open a worker card for "Find why')
    assert block[1] == "Claude Code was told: to skip the call (a deny), and to show"
    person = 'lich is running this task as card "Fix the flaky test"; its report will come back'
    assert block[2].startswith("the person:") and person in block[2]
    assert block[3].startswith("both, as an error:") and "Not an error:" in block[3]
    assert block[4].startswith("the model alone:") and block[4].endswith(" characters)")


def test_verbose_adds_the_raw_bodies(tmp_path: Path) -> None:
    code, lines, _ = _run(tmp_path, verbose=True)
    assert code == ExitCode.OK
    body = (
        'POST /mod/answer {"session_id":"demo-card",'
        '"text":"Rewrote docs/cli.md; the tests pass."} -> 204'
    )
    assert body in [line.strip() for line in lines]
    # Claude Code's are the plugin's own hooks, run from the package folder (README's route)
    stop = [line.strip() for line in lines if line.strip().startswith("$ ")]
    assert any('/plugin/lich-hook" Stop claude' in line for line in stop), stop
    assert any("lich-hook PreToolUse crush 2>/dev/null" in line for line in stop), stop
    assert any(line.strip().startswith("ran:    lich open --kind claude") for line in lines)
    assert any(line.strip() == "exit 0, stdout: {}" for line in lines)  # Antigravity's
    assert not any("demo --verbose" in line for line in lines)  # already verbose


def test_demo_ends_with_what_was_installed_and_what_to_run_next(tmp_path: Path) -> None:
    _, lines, _ = _run(tmp_path)
    tail = "\n".join(lines[-10:])
    assert tail.startswith("All harnesses behaved: 14 hook runs exited 0"), tail
    assert "Nothing was installed" in tail
    # for plugin users first (nothing to install), then the install route
    assert "Next: in a terminal lich opened, `lich-hook doctor`" in tail
    assert "Added the Claude Code plugin (README)? Then that is all." in tail
    assert "`lich-hook install claude --dry-run`" in tail
    assert lines[-2:] == [
        "More: lich-hook demo --verbose",
        "  the commands, payloads, requests and stdout behind each line above.",
    ]


def test_a_report_lich_refuses_is_a_problem(tmp_path: Path) -> None:
    """The stand-in answers a wrong token with 401: the hook still exits 0 and says nothing
    (it never breaks the harness), so only the demo's own check can catch it."""
    refused = Scenario(
        "SessionStart",
        {"session_id": "s-1", "cwd": str(tmp_path), "hook_event_name": "SessionStart"},
        "A report with the wrong token.",
        env={"LICH_TOKEN": "not-the-token"},
    )
    code, lines, _ = _run(tmp_path, extra=[("codex", refused)])
    assert code == ExitCode.PROBLEM_FOUND
    at = next(i for i, line in enumerate(lines) if "wrong token" in line)
    assert lines[at].strip().startswith("✗")
    assert "refused (HTTP 401" in lines[at + 1]
    assert "All harnesses behaved" not in "\n".join(lines)
    assert "1 problem(s) above (✗)." in lines
