"""The shipped registration files (docs/harnesses.md): byte-identical to what
lich_hooks.human.settings.registrations renders, in each harness's documented format, and every
command in them does its job when run the way the harness runs it.

Formats checked against each harness's documentation:
- Claude Code plugin: .claude-plugin/plugin.json (only `name` required,
  kebab-case; hooks/hooks.json is loaded by default, so the manifest must not
  name it again), hooks/hooks.json `{"description"?, "hooks": {Event: [{"matcher"?,
  "hooks": [{"type": "command", "command", "timeout" (s)}]}]}}`,
  .claude-plugin/marketplace.json `{name, owner: {name}, plugins: [{name, source: "./…"}]}`.
  The marketplace's plugin is the package folder (`./lich_hooks`): Claude Code and
  Codex copy a plugin's whole folder, so the clone's `.venv`, `.cache`… stay out;
  its manifests name plugin/claude-hooks.json and plugin/codex-hooks.json, whose
  commands start the plugin's own copy (`sh "${…ROOT}/plugin/lich-hook" …`).
- Codex: hooks.json has Claude Code's shape; .codex-plugin/plugin.json names
  it with a `./` path inside the plugin.
- Crush: crush.json `{"hooks": {"PreToolUse": [{"matcher"?, "command", "timeout"?}]}}`,
  flat entries, timeout in whole seconds.
- Antigravity: root hooks.json, top-level keys are hook *names*; each holds
  events; PreInvocation/PostInvocation/Stop/SessionStart take a flat list of
  handlers `{"type": "command", "command", "timeout" (int)}`; PreToolUse/PostToolUse
  take `{matcher, hooks: [...]}` groups.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from lich_hooks import __version__
from lich_hooks.base.harnesses import REGISTRATIONS, fold_event, fold_provider
from lich_hooks.hook.jobs.agent_cards import lich_process
from lich_hooks.human.settings import commandline, registrations
from lich_hooks.human.settings.registry import SETTINGS
from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, run_command, wait_for_log

ROOT = Path(__file__).resolve().parents[2]
FILES = registrations.files()
KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
CLAUDE_EVENTS = {"SessionStart", "Stop", "PreToolUse"}


def _load(relative: str) -> dict[str, Any]:
    """A shipped file's JSON: untyped, as the harness reading it sees it."""
    value = json.loads((ROOT / relative).read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("relative", sorted(FILES))
def test_shipped_file_is_the_rendering(relative: str) -> None:
    shipped = (ROOT / relative).read_bytes()
    assert shipped == registrations.render(FILES[relative]).encode("utf-8")
    assert json.loads(shipped) == FILES[relative]


def test_write_renders_every_file(tmp_path: Path) -> None:
    written = registrations.write(str(tmp_path))
    assert sorted(written) == sorted(FILES)
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (ROOT / relative).read_bytes()


def _claude_style_groups(hooks: object) -> list[tuple[str, dict[str, object]]]:
    """(event, handler) pairs of a Claude Code / Codex `hooks` object, checking the shape."""
    assert isinstance(hooks, dict)
    pairs = []
    for event, groups in hooks.items():
        assert isinstance(groups, list) and groups
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}
            assert isinstance(group.get("matcher", ""), str)
            for handler in group["hooks"]:
                # Codex's statusMessage names the hook in its /hooks (test_codex_name.py)
                assert set(handler) - {"statusMessage"} == {"type", "command", "timeout"}
                assert handler["type"] == "command"
                assert isinstance(handler["timeout"], int)
                pairs.append((event, handler))
    return pairs


def test_claude_code_plugin() -> None:
    manifest = _load(".claude-plugin/plugin.json")
    assert KEBAB.match(str(manifest["name"]))
    assert manifest["version"] == __version__
    assert "hooks" not in manifest  # hooks/hooks.json loads by default; naming it again is an error
    author = manifest["author"]
    assert isinstance(author, dict) and isinstance(author["name"], str)

    hooks_file = _load("hooks/hooks.json")
    assert set(hooks_file) <= {"description", "hooks"}
    pairs = _claude_style_groups(hooks_file["hooks"])
    assert {event for event, _ in pairs} == CLAUDE_EVENTS
    by_event = {event: handler for event, handler in pairs}
    timeout = by_event["PreToolUse"]["timeout"]
    assert isinstance(timeout, int) and timeout > lich_process.OPEN_SECONDS
    [group] = hooks_file["hooks"]["PreToolUse"]
    matcher = re.compile(f"^(?:{group['matcher']})$")
    for tool in ("Agent", "Task", "TaskStop"):
        assert matcher.match(tool), tool
    for tool in ("Bash", "Edit", "AgentX", "TaskOutput"):
        assert not matcher.match(tool), tool

    market = _load(".claude-plugin/marketplace.json")
    assert KEBAB.match(str(market["name"]))
    assert market["description"]  # `claude plugin validate --strict` fails without one
    owner = market["owner"]
    assert isinstance(owner, dict) and owner["name"]
    [entry] = market["plugins"]
    assert entry["name"] == manifest["name"]
    # a folder inside the marketplace ("." is refused by Claude Code's schema)
    assert entry["source"] == registrations.PLUGIN_SOURCE == "./lich_hooks"
    folder = ROOT / entry["source"]
    plugin = _load(f"{entry['source'][2:]}/.claude-plugin/plugin.json")
    assert {k: v for k, v in plugin.items() if k != "hooks"} == manifest
    hooks_path = folder / str(plugin["hooks"])
    assert not (folder / "hooks" / "hooks.json").exists()  # naming a second one is an error
    plugin_hooks = json.loads(hooks_path.read_text(encoding="utf-8"))
    assert plugin_hooks == {
        "description": hooks_file["description"],
        "hooks": registrations.claude_hooks(registrations.plugin_command),
    }


def test_the_plugin_folder_is_the_package_and_nothing_else() -> None:
    """What Claude Code and Codex copy: the package's files (no tests, no clone)."""
    folder = ROOT / registrations.PLUGIN_SOURCE
    assert (folder / "__init__.py").is_file() and (folder / "plugin" / "lich-hook").is_file()
    assert not any(
        part in ("tests", ".venv", ".git")
        for p in folder.rglob("*")
        for part in p.parts[len(folder.parts) :]
    )


def test_codex_plugin() -> None:
    for root in ("", "lich_hooks/"):
        manifest = _load(f"{root}.codex-plugin/plugin.json")
        assert KEBAB.match(str(manifest["name"]))
        assert manifest["version"] == __version__ and manifest["description"]
        path = str(manifest["hooks"])
        assert path.startswith("./") and ".." not in path
        assert (ROOT / root / path).is_file()
        folder = ROOT / root / ".codex-plugin"
        assert list(folder.iterdir()) == [folder / "plugin.json"]
        hooks_file = _load(f"{root}{path[2:]}")
        assert set(hooks_file) == {"hooks"}
        pairs = _claude_style_groups(hooks_file["hooks"])
        assert [event for event, _ in pairs] == ["SessionStart"]


def test_crush_hooks() -> None:
    crush = _load("crush-hooks.json")
    assert set(crush) == {"hooks"}
    hooks = crush["hooks"]
    assert isinstance(hooks, dict) and set(hooks) == {"PreToolUse"}
    [entry] = hooks["PreToolUse"]
    assert set(entry) <= {"name", "matcher", "command", "timeout"}
    assert "matcher" not in entry  # every tool call may carry the first report
    assert isinstance(entry["timeout"], int)


def test_antigravity_hooks() -> None:
    agy = _load("hooks.json")
    assert "enabled" not in agy  # every top-level key is a hook name
    flat = {"PreInvocation", "PostInvocation", "Stop", "SessionStart"}
    for name, events in agy.items():
        assert isinstance(name, str) and isinstance(events, dict)
        for event, handlers in events.items():
            assert event in flat | {"PreToolUse", "PostToolUse", "enabled"}
            if event in flat:
                for handler in handlers:
                    assert set(handler) <= {"type", "command", "timeout"}
                    assert handler["type"] == "command"
                    assert (
                        isinstance(handler["timeout"], int)
                        and -(2**31) <= handler["timeout"] < 2**31
                    )
    assert list(agy["lich"]) == ["PreInvocation"]


def _commands() -> list[tuple[str, str, str]]:
    """(file, event key it is registered under, command) for every command shipped."""
    found = []

    def walk(relative: str, value: object, event: str | None) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "command" and isinstance(item, str):
                    assert event is not None
                    found.append((relative, event, item))
                else:
                    walk(relative, item, key if fold_event(key) else event)
        elif isinstance(value, list):
            for item in value:
                walk(relative, item, event)

    for relative, value in FILES.items():
        walk(relative, value, None)
    return found


# Each shipped hooks file and the provider its registry entry is; then the plugin's own.
PLUGIN_FILES = {path: key for key, path in registrations.PLUGIN_HOOKS.items()}
SHIPPED = {entry.shipped_file: key for key, entry in SETTINGS.items() if entry.shipped_file}
PROVIDER_OF = {**SHIPPED, **PLUGIN_FILES}
# What each harness sets in a plugin hook's environment (measured: Claude Code 2.1.328 and
# 2.1.332 export CLAUDE_PLUGIN_ROOT; Codex 0.171.0 exports PLUGIN_ROOT and substitutes
# `${PLUGIN_ROOT}` in the command text).
ROOT_VARIABLE = {"claude": "CLAUDE_PLUGIN_ROOT", "codex": "PLUGIN_ROOT"}


def test_every_command_names_its_event_and_harness() -> None:
    commands = _commands()
    assert {relative for relative, _, _ in commands} == set(PROVIDER_OF)
    for relative, event, command in commands:
        found = commandline.parse(command)
        assert found is not None, command
        provider = PROVIDER_OF[relative]
        # the guard the harness's own shell evaluates (settings/commandline.py)
        assert found.guard == REGISTRATIONS[provider].guard
        if relative in PLUGIN_FILES:
            # the plugin's own copy, started by sh (a copy that lost its mode bits still runs)
            assert found.launcher
            assert found.program == f"${{{ROOT_VARIABLE[provider]}}}/plugin/lich-hook"
        else:
            # the console script on PATH: no plugin-root variable
            assert (found.program, found.launcher) == ("lich-hook", False)
        assert fold_event(found.event) == fold_event(event)
        assert fold_provider(found.provider) == provider
        assert command.isascii() and "\\" not in command


def test_every_shipped_command_has_a_route() -> None:
    """A registration whose (provider, event) is missing from harness.py's table would run
    as a silent no-op: every shipped command, and every module's, has its job there."""
    from lich_hooks.base import harnesses as harness
    from lich_hooks.human.settings import modules
    from lich_hooks.human.settings.registry import MODULES

    argvs = [commandline.parse(command).argv()[1:] for _, _, command in _commands()]  # type: ignore[union-attr]
    for module in MODULES.values():
        command = modules.command_of(modules.template(module.template))
        assert command is not None
        argvs.append(shlex.split(command)[1:])
    for event, provider in argvs:
        folded_event, folded_provider = fold_event(event), fold_provider(provider)
        assert folded_event is not None and folded_provider is not None
        assert harness.route(folded_provider, folded_event) is not None, (provider, event)


SAMPLE_ID = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01"


def _harness_payload(provider: str, event: str) -> dict[str, object]:
    if provider == "antigravity":
        return {"conversationId": SAMPLE_ID, "hook_event_name": event}
    body: dict[str, object] = {"session_id": SAMPLE_ID, "cwd": "/tmp", "hook_event_name": event}
    if event == "PreToolUse":
        body.update(
            tool_name="Bash" if provider == "claude" else "bash", tool_input={"command": "ls"}
        )
    if event == "SessionStart":
        body.update(source="startup", transcript_path="/tmp/x.jsonl")
    if event == "Stop":
        body.update(last_assistant_message="Done.", stop_hook_active=False)
    return body


@pytest.mark.parametrize(("relative", "event", "command"), _commands(), ids=lambda v: str(v))
def test_every_command_runs_against_the_stand_in(
    relative: str, event: str, command: str, lich: StandIn, tmp_path: Path
) -> None:
    provider = PROVIDER_OF[relative]
    env = base_env(tmp_path, **lich.env("card-1"))
    if relative in PLUGIN_FILES:
        # the plugin alone: no lich-hook on PATH, only a Python, as a fresh machine has it
        env["PATH"] = "/usr/bin:/bin"
        env[ROOT_VARIABLE[provider]] = str(ROOT / registrations.PLUGIN_SOURCE)
    ran = run_command(command, _harness_payload(provider, event), env, cwd=tmp_path)
    expected = {"PreInvocation": b"{}"}.get(event, b"") if provider == "antigravity" else b""
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, expected, b"")
    [record] = wait_for_log(env, 1)
    reports = provider != "claude" or event == "SessionStart"
    if reports:
        [request] = lich.wait(1)
        body = assert_client_body("session-start", request.body)
        assert body == {
            "session_id": "card-1",
            "provider_session_id": SAMPLE_ID,
            "provider": provider,
        }
        assert record["outcome"] == "taken"
    else:
        # Stop of a non-worker, PreToolUse on a non-Agent tool: nothing for lich.
        assert lich.received == []


def test_timeouts_are_sensible() -> None:
    for relative, value in FILES.items():
        for handler in _handlers(value):
            timeout = handler["timeout"]
            assert isinstance(timeout, int)
            if "PreToolUse claude" in str(handler["command"]):
                assert timeout > lich_process.OPEN_SECONDS, relative
            else:
                # above the 2 s stdin bound plus start-up, far below a harness's patience
                assert 3 <= timeout <= 10, (relative, handler)


def _handlers(value: object) -> list[dict[str, object]]:
    if isinstance(value, dict):
        if "command" in value:
            return [value]
        return [h for item in value.values() for h in _handlers(item)]
    if isinstance(value, list):
        return [h for item in value for h in _handlers(item)]
    return []
