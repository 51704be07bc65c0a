"""docs/performance.md: `lich-hook` imports nothing heavy before it knows it has work to do.

Each case runs the real console script through `sh -c`, as a harness does,
with PYTHONPROFILEIMPORTTIME=1: the interpreter then lists on stderr every
module it imports, nested under the import that pulled it in. That is the
ground truth of what a run costs, whoever caused it, and it needs no hook in
our code. (It makes stderr non-empty by design; these tests do not judge
stderr, the feature tests do.)

Two questions per path:
  * what our code imports: everything from the wrapper's `from lich_hooks.cli
    import main` on. Must hold with any installer and any install mode.
  * what the whole process imports beyond a bare `python -c pass`: the same,
    plus the console-script wrapper. Judged only when the wrapper is one that
    does not import `re` itself (pip >= 25.2, uv): an older pip's wrapper pays
    for `re` before our code runs, which docs/performance.md explains.

No timing here: wall-clock budgets are benchmarks/latency.py's job, on a
machine quiet enough to trust them. Imports are deterministic.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.support.nofork import no_fork_env
from tests.support.runner import LICH_HOOK, Stdin, base_env, run_command, run_hook, wait_for_log

# Each costs more than a no-op path's whole budget (about 5 ms against
# python -c pass's 10), or drags in something that does.
FORBIDDEN = frozenset(
    {
        "click",
        "requests",
        "orjson",
        "json",
        "re",
        "typing",
        "subprocess",
        "signal",
        "dataclasses",
        "enum",
        "urllib.parse",
        "http.client",
        "platformdirs",
        "importlib.metadata",
        "pathlib",
        "tempfile",
    }
)

SID = "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10"
CLAUDE_MAIN_LOOP = {
    "LICH_SUBAGENT_DEPTH": "0",
    "CLAUDE_CODE_SESSION_ATTENDED": "1",
    "CLAUDE_CODE_ENTRYPOINT": "cli",
}
STOP = {
    "session_id": SID,
    "hook_event_name": "Stop",
    "stop_hook_active": False,
    "last_assistant_message": "Done: the reconnect loop backs off now.",
    "background_tasks": [],
}
BASH = {
    "session_id": SID,
    "hook_event_name": "PreToolUse",
    "permission_mode": "auto",
    "tool_name": "Bash",
    "tool_input": {"command": "git status", "description": "Show status"},
    "tool_use_id": "toolu_01XyZ_9Q",
}
CRUSH = {"session_id": SID, "hook_event_name": "PreToolUse", "tool_name": "bash"}
WORKER = {**CLAUDE_MAIN_LOOP, "LICH_SUBAGENT_DEPTH": "1"}


def parse_importtime(stderr: bytes) -> list[tuple[int, str]]:
    """(depth, module) per `import time:` line, in the order the interpreter printed them.

    A line is printed when its import finishes, so a module's nested imports
    come before it, one indent level (two spaces) deeper.
    """
    rows: list[tuple[int, str]] = []
    for line in stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue  # the header line
        column = parts[2]
        depth = (len(column) - len(column.lstrip(" ")) - 1) // 2
        rows.append((depth, column.strip()))
    return rows


def imported_by_us(rows: list[tuple[int, str]]) -> set[str]:
    """Modules imported from the first top-level `lich_hooks…` import to the end.

    Everything the interpreter's startup and the wrapper imported before that
    (the wrapper's own `import re`, with an older pip) is not ours.
    """
    first = next(i for i, (depth, name) in enumerate(rows) if depth == 0 and _ours(name))
    before = max((i for i in range(first) if rows[i][0] == 0), default=-1)
    return {name for _, name in rows[before + 1 :]}


def _ours(name: str) -> bool:
    return name == "lich_hooks" or name.startswith("lich_hooks.")


def baseline_modules(env: dict[str, str]) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", "pass"],
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        check=True,
    )
    return {name for _, name in parse_importtime(proc.stderr)}


def wrapper_imports_re() -> bool:
    return "import re" in LICH_HOOK.read_text(errors="replace")


def decisions(stderr: bytes) -> list[str]:
    return [
        line.rpartition(": ")[2]
        for line in stderr.decode("utf-8", "replace").splitlines()
        if line.startswith("lich-hook: ")
    ]


def as_users_run_it(env: dict[str, str]) -> dict[str, str]:
    """No LICH_HOOK_LOG: its writer imports json, on purpose, for whoever asked for it."""
    return {key: value for key, value in env.items() if key != "LICH_HOOK_LOG"}


def profiled(env: dict[str, str]) -> dict[str, str]:
    return {**as_users_run_it(env), "PYTHONPROFILEIMPORTTIME": "1"}


def debugged(env: dict[str, str]) -> dict[str, str]:
    """A separate run for the decision line: debug output may import what it needs."""
    return {**as_users_run_it(env), "LICH_HOOK_DEBUG": "1"}


def _outside(tmp: Path, lich: StandIn) -> tuple[str, Stdin, dict[str, str], bytes]:
    return "PreToolUse crush", CRUSH, base_env(tmp), b""


def _antigravity_outside(tmp: Path, lich: StandIn) -> tuple[str, Stdin, dict[str, str], bytes]:
    return "PreInvocation antigravity", {"conversationId": SID}, base_env(tmp), b"{}"


def _crush_after_first_report(tmp: Path, lich: StandIn) -> tuple[str, Stdin, dict[str, str], bytes]:
    env = base_env(tmp, **lich.env("card-1"))
    first = run_hook("PreToolUse crush", CRUSH, env)
    assert first.returncode == 0
    lich.wait(1)
    [record] = wait_for_log(env, 1)  # the sender logs after it recorded lich's 204
    assert record["decision"] == "report" and record["status"] == 204
    return "PreToolUse crush", CRUSH, env, b""


def _stop_not_a_worker(tmp: Path, lich: StandIn) -> tuple[str, Stdin, dict[str, str], bytes]:
    return "Stop claude", STOP, base_env(tmp, **lich.env("card-1"), **CLAUDE_MAIN_LOOP), b""


def _pre_tool_use_bash(tmp: Path, lich: StandIn) -> tuple[str, Stdin, dict[str, str], bytes]:
    env = base_env(tmp, **lich.env("card-1"), **CLAUDE_MAIN_LOOP)
    return "PreToolUse claude", BASH, env, b""


def _status_line_outside(tmp: Path, lich: StandIn) -> tuple[str, Stdin, dict[str, str], bytes]:
    return "status-line", {"session_id": SID}, base_env(tmp), b""


def _status_line_no_workers(tmp: Path, lich: StandIn) -> tuple[str, Stdin, dict[str, str], bytes]:
    env = base_env(tmp, **lich.env("card-1"), LICH_BIN="/bin/false")
    return "status-line", {"session_id": SID}, env, b""


# path -> (setup, the decision the hook logs: that word; None: any but work;
# "": the command logs none, e.g. the status line, which is not a hook event)
NO_OP_PATHS = {
    "outside-lich": (_outside, "outside-lich"),
    "antigravity-outside-lich": (_antigravity_outside, "outside-lich"),
    "crush-after-first-report": (_crush_after_first_report, "already-reported"),
    "stop-not-a-worker": (_stop_not_a_worker, None),
    "pre-tool-use-bash": (_pre_tool_use_bash, None),
    # Claude Code runs the status line every few hundred milliseconds.
    "status-line-outside-lich": (_status_line_outside, ""),
    "status-line-no-workers": (_status_line_no_workers, ""),
}


@pytest.mark.parametrize("path", sorted(NO_OP_PATHS))
def test_no_op_path_imports_nothing_heavy(path: str, tmp_path: Path, lich: StandIn) -> None:
    setup, expected_decision = NO_OP_PATHS[path]
    args, payload, env, stdout = setup(tmp_path, lich)
    if expected_decision != "":
        [decision] = decisions(run_hook(args, payload, debugged(env)).stderr)
        if expected_decision is not None:
            assert decision == expected_decision
        else:  # jobs built elsewhere: whatever they decide here, it is not work
            assert decision not in ("report", "internal-error")

    ran = run_hook(args, payload, profiled(env))
    assert (ran.returncode, ran.stdout) == (0, stdout)
    rows = parse_importtime(ran.stderr)
    assert sorted(imported_by_us(rows) & FORBIDDEN) == []
    if not wrapper_imports_re():
        extra = {name for _, name in rows} - baseline_modules(env)
        assert sorted(extra & FORBIDDEN) == []


def test_reporting_hook_process_imports_nothing_heavy(tmp_path: Path, lich: StandIn) -> None:
    """The harness waits for the hook process only; the detached sender's stderr
    is /dev/null, so its imports never show here (the next test sees them)."""
    env = base_env(tmp_path, **lich.env("card-1"))
    ran = run_hook("SessionStart claude", {"session_id": SID}, profiled(env))
    assert (ran.returncode, ran.stdout) == (0, b"")
    [request] = lich.wait(1)
    assert request.status == 204
    assert sorted(imported_by_us(parse_importtime(ran.stderr)) & FORBIDDEN) == []


@pytest.mark.parametrize(
    ("args", "payload", "extra"),
    [("SessionStart claude", {"session_id": SID}, {}), ("Stop claude", STOP, WORKER)],
    ids=["session-start", "worker answer"],
)
def test_the_sender_imports_nothing_heavy_either(
    args: str, payload: dict[str, object], extra: dict[str, str], tmp_path: Path, lich: StandIn
) -> None:
    """lich has the report only once the sender has imported what it sends with, so
    the sender is held to the hot path's rule too. Without fork (as on Windows) the
    send runs in the hook process, where the interpreter's import list shows it."""
    env = no_fork_env(tmp_path, base_env(tmp_path, **lich.env("card-1"), **extra))
    ran = run_hook(args, payload, profiled(env))
    assert (ran.returncode, ran.stdout) == (0, b"")
    assert [request.status for request in lich.received] == [204]  # sent before the exit
    assert sorted(imported_by_us(parse_importtime(ran.stderr)) & FORBIDDEN) == []


def test_parse_importtime_reads_nesting() -> None:
    stderr = (
        b"import time: self [us] | cumulative | imported package\n"
        b"import time:       100 |        100 |   _sre\n"
        b"import time:       400 |        500 | re\n"
        b"import time:        50 |         50 |   lich_hooks\n"
        b"import time:        90 |        140 | lich_hooks.cli\n"
        b"import time:        70 |         70 |     select\n"
        b"import time:        80 |        150 |   lich_hooks.hook.payload\n"
        b"import time:        60 |        210 | lich_hooks.hook.run\n"
        b"lich-hook: Stop claude: not-a-worker\n"
    )
    rows = parse_importtime(stderr)
    assert rows[0] == (1, "_sre") and rows[1] == (0, "re") and rows[4] == (2, "select")
    assert imported_by_us(rows) == {
        "lich_hooks",
        "lich_hooks.cli",
        "select",
        "lich_hooks.hook.payload",
        "lich_hooks.hook.run",
    }
    assert decisions(stderr) == ["not-a-worker"]


# --- the plugin's hook path: lich_hooks/plugin/boot.py, from the plugin's own copy ----------


def _plugin_setup(
    tmp: Path, lich: StandIn, provider: str, event: str, settings: str | None
) -> tuple[Path, dict[str, str]]:
    """The plugin's copy and a card's environment; `settings`: where (under HOME) an
    `install` entry of ours for `event` stands (the plugin's run never reads it)."""
    from tests.registrations.test_plugin_route import copy_plugin, python_dir

    root = copy_plugin(tmp)
    env = base_env(tmp, **lich.env("card-1"), **CLAUDE_MAIN_LOOP)
    env.update(PATH=python_dir(tmp), CLAUDE_PLUGIN_ROOT=str(root), PLUGIN_ROOT=str(root))
    if settings is not None:
        path = Path(env["HOME"]) / settings
        path.parent.mkdir(parents=True, exist_ok=True)
        command = f"{LICH_HOOK} {event} {provider}"
        group = {"hooks": [{"type": "command", "command": command, "timeout": 5}]}
        path.write_text(json.dumps({"hooks": {event: [group]}}))
    return root, env


AGENT: dict[str, object] = {
    "session_id": SID,
    "hook_event_name": "PreToolUse",
    "tool_name": "Agent",
    "tool_input": {"description": "Fix the test", "prompt": "Fix it", "subagent_type": "x"},
}
# case -> (provider, event, payload, where an install entry stands or None, the decision).
# Beside an install entry the plugin reads no settings file: it claims the event
# (hook/claim.py), so its path is the one it takes alone; the profiled second run
# finds the claim taken.
PLUGIN_PATHS: dict[str, tuple[str, str, dict[str, object], str | None, str | None]] = {
    "claude-reports": ("claude", "SessionStart", {"session_id": SID}, None, "report"),
    "claude-beside-install": (
        "claude",
        "SessionStart",
        {"session_id": SID},
        ".claude/settings.json",
        "report",
    ),
    "claude-agent-beside-install": ("claude", "PreToolUse", AGENT, ".claude/settings.json", None),
    "codex-beside-install": (
        "codex",
        "SessionStart",
        {"session_id": SID},
        ".codex/hooks.json",
        "report",
    ),
}


@pytest.mark.parametrize("case", list(PLUGIN_PATHS))
def test_the_plugin_hook_path_loads_no_human_module(
    case: str, tmp_path: Path, lich: StandIn
) -> None:
    """The plugin's launcher runs `python -I -S boot.py <event> <provider>`; with its
    claim it stays on the hook floor and base/."""
    provider, event, payload, settings, decision = PLUGIN_PATHS[case]
    root, env = _plugin_setup(tmp_path, lich, provider, event, settings)
    boot = root / "plugin" / "boot.py"
    command = f"python3 -I -S {boot} {event} {provider}"
    [logged] = decisions(run_command(command, payload, debugged(env), cwd=tmp_path).stderr)
    if decision is not None:
        assert logged == decision
    profiled_command = command.replace(" -I ", " -X importtime -I ")
    ran = run_command(profiled_command, payload, as_users_run_it(env), cwd=tmp_path)
    assert (ran.returncode, ran.stdout) == (0, b"")
    modules = {name for _, name in parse_importtime(ran.stderr)}
    assert "lich_hooks.hook.run" in modules  # the hook ran from the plugin's copy
    assert sorted(name for name in modules if name.startswith("lich_hooks.human")) == []
    assert sorted(modules & FORBIDDEN) == []
