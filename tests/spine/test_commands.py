"""`lich-hook demo` and `lich-hook listen` (docs/troubleshooting.md), run as a person runs them."""

from __future__ import annotations

import queue
import socket
import subprocess
import threading
from pathlib import Path

from lich_hooks.human.settings.registry import HARNESSES
from lich_hooks.human.settings.scenarios import Demo
from tests.spine.helpers import SID
from tests.support.runner import LICH_HOOK, base_env, run_hook, wait_for_log


def test_demo_runs_every_harness(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    proc = subprocess.run(
        [str(LICH_HOOK), "demo"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    lines = out.splitlines()
    for heading in (
        # the plugin route's own hooks, run from the package folder (README's first route)
        "Claude Code (lich_hooks/plugin/claude-hooks.json)",
        "Codex (lich_hooks/plugin/codex-hooks.json)",
        "Crush (crush-hooks.json)",
        "Antigravity (hooks.json)",
        "opencode (plugin lich-hooks.js, run as the plugin runs it)",
        "omp (extension lich-hooks.ts, run as the extension runs it)",
    ):
        assert heading in lines, out
    # Each harness's section, by its title: claude's SessionStart and worker Stop, codex, the
    # first crush and antigravity calls (the second is deduped), every opencode and omp module
    # run (not deduped); a harness added to the registry reports at least its first session.
    sections = {block.split(" (", 1)[0]: block for block in out.split("\n\n")}
    taken = {"Claude Code": 2, "Codex": 1, "Crush": 1, "Antigravity": 1, "opencode": 2, "omp": 2}
    for harness in HARNESSES.values():
        count = sections[harness.title].count(" (taken)")
        assert count == taken[harness.title] if harness.title in taken else count >= 1, out
    runs = sum(len(h.scenarios(Demo(str(tmp_path), "lich"))) for h in HARNESSES.values())
    assert out.count("✓ ") == runs and "✗" not in out
    assert "      lich received: nothing" in lines  # the deduped second calls
    assert "      Antigravity was told: nothing, so it carries on" in lines
    assert f"All harnesses behaved: {runs} hook runs exited 0" in out
    assert "Nothing was installed" in out
    assert "-> 204" not in out  # the raw requests are --verbose's
    assert not (Path(env["HOME"]) / ".local").exists()  # its state lived in a temporary dir
    verbose = subprocess.run(
        [str(LICH_HOOK), "demo", "--verbose"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (verbose.returncode, verbose.stderr) == (0, "")
    assert verbose.stdout.count("-> 204") == out.count(" (taken)")  # one request per report
    assert "        exit 0, stdout: {}" in verbose.stdout.splitlines()  # Antigravity's


def _lines(stream: object) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_listen_prints_exports_then_each_report(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    proc = subprocess.Popen(
        [str(LICH_HOOK), "listen"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _lines(proc.stdout)
        exported: dict[str, str] = {}
        while True:
            line = lines.get(timeout=10)
            if line.startswith("export "):
                key, _, value = line[len("export ") :].partition("=")
                exported[key] = value
            if line.startswith("(Ctrl-C"):
                break
        assert set(exported) == {"LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID"}
        hook_env = base_env(tmp_path, **exported)
        ran = run_hook("SessionStart codex", {"session_id": SID}, hook_env)
        assert ran.returncode == 0
        report = lines.get(timeout=10)
        assert report.startswith("POST /session-start -> 204 "), report
        assert SID in report and "'provider': 'codex'" in report
        run_hook("SessionStart aider", {"session_id": SID}, hook_env)  # unknown: nothing sent
        run_hook("SessionStart claude", {"session_id": ""}, hook_env)  # no id: nothing sent
        wait_for_log(hook_env, 3)
        assert lines.empty()
        assert exported["LICH_TOKEN"] not in report
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()
        assert proc.stdout is not None
        proc.stdout.close()


def test_listen_on_a_taken_port_says_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [str(LICH_HOOK), "listen", "--port", str(port)],
            env=base_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_and_version_words_work_like_the_options(tmp_path: Path) -> None:
    env = base_env(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LICH_HOOK), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    assert run("help").stdout == run("--help").stdout != ""
    assert run("help", "listen").stdout == run("listen", "--help").stdout
    version = run("version")
    assert (version.returncode, version.stdout) == (0, run("--version").stdout)
    assert "lich-hook <event> [<provider>]" in run("--help").stdout
