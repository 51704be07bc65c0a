"""`lich-hook demo`: every shipped registration run as its harness runs it, against the built-in
stand-in for lich, said in words; nothing is installed (docs/architecture.md, "One stand-in")."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from lich_hooks.base.harnesses import REGISTRATIONS
from lich_hooks.human.commands.environment import Environment, ExitCode
from lich_hooks.human.settings import commandline, ours, registrations
from lich_hooks.human.settings.registry import HARNESSES
from lich_hooks.human.settings.scenarios import Demo, Scenario
from lich_hooks.human.standin.server import Received, StandIn

CARD = "demo-card"
CALLS = "lich-calls.jsonl"
PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A stand-in `lich` for the agent-cards scenarios: it notes each argv beside itself (demo shows
# what lich was asked), `open` answers that the worker has the task, `close` succeeds.
STANDIN_LICH = """
import json, os, sys
with open(os.path.join(os.path.dirname(__file__), CALLS), "a") as calls:
    calls.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:2] == ["open"]:
    delivery = {"ticket": "t-7", "target": "fix-flaky-7", "status": "pending", "answer": None}
    print(json.dumps({"id": "s-7", "label": "Fix the flaky test", "name": "fix-flaky-7",
                      "path": os.getcwd(), "kind": "claude", "delivery": delivery}))
"""


def _standin_lich(directory: str) -> str:
    """An executable `lich`: a sh launcher, as a #! line cannot hold a path with spaces (Windows:
    a .bat; the demo's arguments hold nothing cmd.exe would read)."""
    script = os.path.join(directory, "lich.py")
    with open(script, "w") as handle:
        handle.write(f"CALLS = {CALLS!r}\n{STANDIN_LICH}")
    if sys.platform == "win32":
        path = os.path.join(directory, "lich.bat")
        with open(path, "w") as handle:
            handle.write(f'@"{sys.executable}" "{script}" %*\r\n')
        return path
    path = os.path.join(directory, "lich")
    with open(path, "w") as handle:
        handle.write(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(script)} "$@"\n')
    os.chmod(path, 0o700)
    return path


def plugin_route(key: str) -> tuple[str, dict[str, str]] | None:
    """The plugin file demo runs for this harness (from this package folder, as from a clone) and
    its root variable; None: no plugin, Windows (its `sh` needs Git Bash): the `install` route."""
    if key not in registrations.PLUGIN_HOOKS or sys.platform == "win32":
        return None
    if not os.path.isfile(os.path.join(PACKAGE, "plugin", "lich-hook")):
        return None  # a package without its plugin files: the `install` route's command
    variable = REGISTRATIONS[key].plugin_root
    assert variable is not None
    return registrations.PLUGIN_HOOKS[key], {variable: PACKAGE}


def plugin_command(shipped: str, event: str) -> str | None:
    """The command of ours the plugin file `shipped` registers for `event`."""
    document = registrations.files()[shipped]
    hooks = document.get("hooks") if isinstance(document, dict) else None
    found = ours.our_commands(hooks.get(event) if isinstance(hooks, dict) else None)
    return found[0] if found else None


def run_command(
    command: str, payload: bytes, env: dict[str, str], cwd: str
) -> subprocess.CompletedProcess[bytes]:
    """Run a registration's command as the harnesses do: `sh -c`, payload on stdin; on Windows
    `%COMSPEC% /C` and the line as written (a list would be quoted for the C runtime), a guarded
    command's program alone (its guard is POSIX shell)."""
    shell: str | list[str] = ["/bin/sh", "-c", command]
    if sys.platform == "win32":
        found = commandline.parse(command)
        if found is not None and found.guard is not None and not found.launcher:
            command = " ".join([f'"{found.program}"', *found.argv()[1:]])
        shell = f'"{os.environ.get("COMSPEC") or "cmd.exe"}" /C {command}'
    return subprocess.run(
        shell, input=payload, env=env, cwd=cwd, capture_output=True, timeout=30, check=False
    )


def wait_for_log(path: str, count: int) -> None:
    """Wait (5 s at most) until `count` runs have logged: a run that reports logs after its send."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            with open(path, "rb") as handle:
                if handle.read().count(b"\n") >= count:
                    return
        except OSError:
            pass
        time.sleep(0.01)


def run(
    environment: Environment,
    extra: list[tuple[str, Scenario]] | None = None,
    verbose: bool = False,
) -> ExitCode:
    """OK when every hook exited 0 with no stderr, every command shipped, every report was taken."""
    out = environment.out
    bin_dir = os.path.dirname(os.path.abspath(environment.executable))
    problems = 0
    runs = 0
    with tempfile.TemporaryDirectory(prefix="lich-demo-") as tmp, StandIn() as lich:
        log_path = os.path.join(tmp, "hook.log")
        dropped = ("LICH_", "CLAUDE_")
        base_env = {
            **{k: v for k, v in environment.environ.items() if not k.startswith(dropped)},
            **lich.env(CARD),
            "PATH": bin_dir + os.pathsep + environment.environ.get("PATH", ""),
            "LICH_HOOK_STATE_DIR": os.path.join(tmp, "state"),
            "LICH_HOOK_LOG": log_path,
        }
        out("Each harness's shipped hooks, run the way the harness runs them, against a stand-in")
        out(f"for lich on 127.0.0.1:{lich.port} that plays card {CARD}.")
        current = None
        demo = Demo(tmp, _standin_lich(tmp))
        every = [(key, s) for key, harness in HARNESSES.items() for s in harness.scenarios(demo)]
        for key, scenario in every + (extra or []):
            harness = HARNESSES[key]
            name, plugin = harness.title, plugin_route(key)
            path, root = plugin or (harness.shown_as, {})
            if key != current:
                current = key
                out("")
                out(environment.paint(f"{name} ({path})", "bold"))
            if plugin is not None:
                found = plugin_command(path, scenario.event)
                command, shipped = found or f"(no {scenario.event} hook)", found is not None
            else:
                command = harness.command(scenario.event)
                shipped = command in harness.shipped_commands()
            if not shipped:
                out(environment.paint(f"  ✗ {command} is not in {path}", "red"))
                problems += 1
                continue
            before = len(lich.received)
            calls_before = len(_lich_calls(tmp))
            payload = json.dumps(scenario.payload).encode()
            proc = run_command(command, payload, {**base_env, **root, **scenario.env}, tmp)
            runs += 1
            wait_for_log(log_path, runs)
            received, calls = lich.received[before:], _lich_calls(tmp)[calls_before:]
            failed = sum(r.status != 204 for r in received)  # a refused report, a run that failed
            failed += proc.returncode != 0 or bool(proc.stderr)
            problems += failed
            mark = environment.paint("✓", "green") if failed == 0 else "✗"
            out(f"  {mark} {scenario.note}")
            for line in _words(name, proc, received, calls):
                out(f"      {line}")
            if verbose:
                out(environment.paint(f"      $ {command}", "dim"))
                for line in _raw(payload, proc, received, calls):
                    out(environment.paint(f"        {line}", "dim"))
    out("")
    if problems:
        out(environment.paint(f"{problems} problem(s) above (✗).", "red"))
    else:
        behaved = environment.paint("All harnesses behaved:", "green")
        out(f"{behaved} {runs} hook runs exited 0 with nothing on stderr, and the")
        out("  stand-in, which checks each request as lich does, took every report.")
    out("Nothing was installed: no settings file was changed; the stand-in and the hooks'")
    out("  state lived in a temporary folder, now removed.")
    first, *others = HARNESSES.values()
    out("Next: in a terminal lich opened, `lich-hook doctor` says whether your harness runs these")
    out(f"  hooks. Added the {first.title} plugin (README)? Then that is all. Without it,")
    out(f"  `lich-hook install {first.key} --dry-run` shows what registering would change")
    out("  (or " + ", ".join(other.key for other in others) + "); without --dry-run it registers.")
    if not verbose:
        out("More: lich-hook demo --verbose")
        out("  the commands, payloads, requests and stdout behind each line above.")
    return ExitCode.OK if problems == 0 else ExitCode.PROBLEM_FOUND


Ran = subprocess.CompletedProcess[bytes]


def _words(harness: str, proc: Ran, received: list[Received], calls: list[list[str]]) -> list[str]:
    """One hook run as a person reads it."""
    lich = [_received_words(r) for r in received] + [_call_words(a) for a in calls]
    lines = [f"lich received: {'; '.join(lich) if lich else 'nothing'}"]
    told = _told_words(proc.stdout)
    lines.append(f"{harness} was told: {told[0]}")
    lines += told[1:]
    if proc.returncode != 0:
        lines.append(f"✗ the hook exited {proc.returncode}: the harness would show an error")
    if proc.stderr:
        said = _short(_text(proc.stderr))
        lines.append(f"✗ the hook wrote to stderr, which the harness would show: {said}")
    return lines


def _raw(payload: bytes, proc: Ran, received: list[Received], calls: list[list[str]]) -> list[str]:
    """The bytes behind one hook run (--verbose)."""
    lines = [f"stdin:  {payload.decode()}"]
    for one in received:
        lines.append(f"POST /{one.endpoint} {_text(one.body)} -> {one.status}")
        if one.reason:
            lines.append(f"  ({one.reason})")
    lines += [f"ran:    {shlex.join(['lich', *argv])}" for argv in calls]
    lines.append(f"exit {proc.returncode}, stdout: {_text(proc.stdout) or '(empty)'}")
    if proc.stderr:
        lines.append(f"stderr: {_text(proc.stderr)!r}")
    return lines


def _text(data: bytes) -> str:
    return data.decode(errors="replace")


def _received_words(received: Received) -> str:
    """A report in words: what it tells lich, and whether lich took it."""
    body = received.accepted or {}
    if received.status != 204 or not body:
        why = f": {received.reason}" if received.reason else ""
        return f"a /{received.endpoint} report it refused (HTTP {received.status}{why})"
    if received.endpoint == "session-start":
        provider = str(body.get("provider"))
        title = HARNESSES[provider].title if provider in HARNESSES else provider
        session = body.get("provider_session_id")
        return f"card {body.get('session_id')} is running {title} session {session} (taken)"
    if received.endpoint == "mod/answer":
        card, said = body.get("session_id"), _short(str(body.get("text")), 80)
        return f'card {card}\'s answer, "{said}" (taken)'
    return f"a /{received.endpoint} report"


def _call_words(argv: list[str]) -> str:
    """A `lich` command the hook ran, in words."""
    verb = argv[0] if argv else ""
    if verb == "open" and "--prompt" in argv[:-1]:
        prompt = argv[argv.index("--prompt") + 1]
        return f'a request to open a worker card for "{_short(prompt, 80)}" (lich open)'
    if verb == "close" and len(argv) > 1:
        return f"a request to close card {argv[1]} (lich close)"
    if verb == "control" and len(argv) > 2:
        return f"a request to {argv[2]} the turn of card {argv[1]} (lich control)"
    return f"the command {shlex.join(['lich', *argv])}"


def _told_words(stdout: bytes) -> list[str]:
    """What the harness does with the hook's stdout: who reads which part (docs/agent-cards.md)."""
    text = _text(stdout).strip()
    if text in ("", "{}"):
        return ["nothing, so it carries on"]
    try:
        verdict = json.loads(text)
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict):
        return [repr(_short(text))]
    specific = verdict.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    denied = specific.get("permissionDecision") == "deny"
    parts = [
        ("the person:", verdict.get("systemMessage")),
        ("both, as an error:", specific.get("permissionDecisionReason")),
        ("the model alone:", specific.get("additionalContext")),
    ]
    shown = [(who, what) for who, what in parts if isinstance(what, str) and what]
    if not shown:
        return [repr(_short(text))]
    lines = ["to skip the call (a deny), and to show" if denied else "to go on, and to show"]
    width = max(len(who) for who, _ in shown)
    for who, what in shown:
        if who == "the model alone:":
            what = f"{_short(what, 60)} ({len(what)} characters)"
        lines.append(f"  {who:<{width}} {_short(' '.join(what.split()))}")
    return lines


def _lich_calls(directory: str) -> list[list[str]]:
    """Every argv the stand-in `lich` executable was run with, in order."""
    try:
        with open(os.path.join(directory, CALLS), encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except OSError:
        return []


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
