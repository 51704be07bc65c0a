"""`lich-hook install` / `uninstall`, run as the real console script on scratch files."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from lich_hooks.human.settings import harnesses, ours
from lich_hooks.human.standin.server import StandIn
from tests.operator.conftest import Scratch
from tests.support.runner import LICH_HOOK, run_command

# Every settings harness in the registry; the paths below are written out from
# docs/install.md, so a new entry fails here until its locations are.
HARNESSES = list(harnesses.SETTINGS)
EXE = str(LICH_HOOK)


def user_file(box: Scratch, harness: str) -> Path:
    return {
        "claude": box.home / ".claude" / "settings.json",
        "codex": box.home / ".codex" / "hooks.json",
        "crush": box.home / ".config" / "crush" / "crush.json",
        "antigravity": box.home / ".gemini" / "config" / "hooks.json",
    }[harness]


def project_file(box: Scratch, harness: str) -> Path:
    return {
        "claude": box.project / ".claude" / "settings.json",
        "codex": box.project / ".codex" / "hooks.json",
        "crush": box.project / "crush.json",
        "antigravity": box.project / ".agents" / "hooks.json",
    }[harness]


def commands_in(document: object) -> list[str]:
    return ours.our_commands(document)


def expected(harness: str) -> object:
    return harnesses.SETTINGS[harness].desired(EXE)


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("scope", ["user", "project"])
def test_fresh_install_writes_the_registration_by_absolute_path(
    scratch: Scratch, harness: str, scope: str
) -> None:
    ran = scratch.cli("install", harness, "--scope", scope)
    assert ran.returncode == 0, ran.stderr
    path = user_file(scratch, harness) if scope == "user" else project_file(scratch, harness)
    assert path.exists()
    document = json.loads(path.read_text())
    assert document == expected(harness)
    assert commands_in(document)
    assert all(command.startswith(EXE + " ") for command in commands_in(document))
    assert str(path) in ran.stdout
    assert not Path(str(path) + ".lich-hook.bak").exists()  # nothing to back up
    assert ran.stderr == ""


@pytest.mark.parametrize("harness", HARNESSES)
def test_rerun_changes_nothing(scratch: Scratch, harness: str) -> None:
    assert scratch.cli("install", harness).returncode == 0
    path = user_file(scratch, harness)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    again = scratch.cli("install", harness)
    assert again.returncode == 0
    assert "Already installed" in again.stdout
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert not Path(str(path) + ".lich-hook.bak").exists()


CLAUDE_WITH_OTHERS = """{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "lich-hook SessionStart claude", "timeout": 3}]},
      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    ],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
      {"matcher": "Agent|Task|TaskStop", "hooks": [
        {"type": "command", "command": "agent-logger"},
        {"type": "command", "command": "/old/venv/bin/lich-hook PreToolUse claude"}
      ]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
  },
  "model": "opus"
}
"""


def test_upgrade_replaces_older_entries_and_keeps_everyone_elses(scratch: Scratch) -> None:
    path = user_file(scratch, "claude")
    path.parent.mkdir(parents=True)
    path.write_text(CLAUDE_WITH_OTHERS)
    ran = scratch.cli("install", "claude")
    assert ran.returncode == 0, ran.stderr
    assert "Updated" in ran.stdout
    document = json.loads(path.read_text())
    hooks = document["hooks"]
    # Ours: exactly one per event, this installation, the registration's timeouts.
    assert sorted(commands_in(document)) == sorted(commands_in(expected("claude")))
    assert hooks["SessionStart"][0] == expected("claude")["hooks"]["SessionStart"][0]  # type: ignore[index]
    # Theirs: every foreign handler, under its own event and matcher.
    assert hooks["SessionStart"][1] == {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": "echo hello"}],
    }
    assert hooks["PreToolUse"][0]["hooks"] == [{"type": "command", "command": "audit.sh"}]
    assert hooks["PreToolUse"][1] == {
        "matcher": "Agent|Task|TaskStop",
        "hooks": [{"type": "command", "command": "agent-logger"}],
    }
    assert hooks["Stop"][0] == {"hooks": [{"type": "command", "command": "say done"}]}
    assert document["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert document["model"] == "opus"
    # Untouched lines keep their bytes; the backup is the file as it was.
    text = path.read_text()
    for line in (
        '  "permissions": {"allow": ["Bash(ls:*)"]},',
        '      {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}',
        '      {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},',
        '  "model": "opus"',
    ):
        assert line in text.splitlines()
    assert Path(str(path) + ".lich-hook.bak").read_text() == CLAUDE_WITH_OTHERS
    # And the upgrade is now stable.
    assert "Already installed" in scratch.cli("install", "claude").stdout


def test_uninstall_removes_only_ours(scratch: Scratch) -> None:
    path = user_file(scratch, "claude")
    path.parent.mkdir(parents=True)
    path.write_text(CLAUDE_WITH_OTHERS)
    assert scratch.cli("install", "claude").returncode == 0
    ran = scratch.cli("uninstall", "claude")
    assert ran.returncode == 0, ran.stderr
    assert "Removed" in ran.stdout
    document = json.loads(path.read_text())
    assert commands_in(document) == []
    original = json.loads(CLAUDE_WITH_OTHERS)
    original["hooks"]["SessionStart"].pop(0)
    original["hooks"]["PreToolUse"][1]["hooks"].pop(1)
    assert document == original
    again = scratch.cli("uninstall", "claude")
    assert again.returncode == 0 and "nothing to remove" in again.stdout


@pytest.mark.parametrize("harness", HARNESSES)
def test_install_then_uninstall_restores_a_file_with_foreign_hooks(
    scratch: Scratch, harness: str
) -> None:
    foreigns: dict[str, dict[str, object]] = {
        "claude": {
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}
        },
        "codex": {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}},
        "crush": {"hooks": {"PreToolUse": [{"matcher": "^bash$", "command": "guard.sh"}]}},
        "antigravity": {"guard": {"PreToolUse": [{"matcher": "", "hooks": [{"command": "g"}]}]}},
    }
    foreign = foreigns[harness]
    path = user_file(scratch, harness)
    path.parent.mkdir(parents=True)
    original = json.dumps(foreign, indent=2) + "\n"
    path.write_text(original)
    assert scratch.cli("install", harness).returncode == 0
    installed = json.loads(path.read_text())
    assert commands_in(installed)
    assert scratch.cli("uninstall", harness).returncode == 0
    assert path.read_text() == original


def test_unparsable_file_is_refused_and_untouched(scratch: Scratch) -> None:
    for harness in HARNESSES:
        path = user_file(scratch, harness)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b'{"hooks": {"SessionStart": [}\n')
        before = path.stat().st_mtime_ns
        for verb in ("install", "uninstall"):
            ran = scratch.cli(verb, harness)
            assert ran.returncode == 1
            assert "does not parse" in ran.stdout + ran.stderr
            assert len((ran.stdout + ran.stderr).strip().splitlines()) == 1
            assert "Traceback" not in ran.stderr
        assert path.read_bytes() == b'{"hooks": {"SessionStart": [}\n'
        assert path.stat().st_mtime_ns == before
        assert not Path(str(path) + ".lich-hook.bak").exists()


@pytest.mark.parametrize(
    ("harness", "content", "why"),
    [
        ("claude", '{"hooks": []}\n', '"hooks" is not a JSON object'),
        ("claude", "[1, 2]\n", "not a JSON object"),
        ("claude", '// mine\n{"model": "opus"}\n', "comment"),
        ("antigravity", '{"x": {},}\n', "trailing comma"),
        ("codex", '{"hooks": {"SessionStart": 3}}\n', "not a list"),
    ],
)
def test_shapes_we_cannot_merge_are_refused(
    scratch: Scratch, harness: str, content: str, why: str
) -> None:
    path = user_file(scratch, harness)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    ran = scratch.cli("install", harness, "--dry-run")
    assert ran.returncode == 1
    # On stderr, so `install --dry-run > change.diff` does not bury it in the file.
    assert why in ran.stderr
    assert ran.stdout == ""
    assert len(ran.stderr.strip().splitlines()) == 1
    assert path.read_text() == content


def test_crush_comments_are_kept(scratch: Scratch) -> None:
    path = user_file(scratch, "crush")
    path.parent.mkdir(parents=True)
    text = (
        "{\n"
        '  // my models\n  "models": {"large": {"model": "m", "provider": "p"}},\n'
        '  "hooks": {\n    "PreToolUse": [\n'
        '      {"matcher": "^bash$", "command": "guard.sh"}, /* keep me */\n'
        "    ],\n  },\n}\n"
    )
    path.write_text(text)
    ran = scratch.cli("install", "crush")
    assert ran.returncode == 0, ran.stdout
    new = path.read_text()
    assert "// my models" in new and "/* keep me */" in new
    assert f"{EXE} PreToolUse crush" in new
    assert "Already installed" in scratch.cli("install", "crush").stdout
    assert scratch.cli("uninstall", "crush").returncode == 0
    assert path.read_text() == text


def test_dry_run_prints_a_diff_and_writes_nothing(scratch: Scratch) -> None:
    ran = scratch.cli("install", "codex", "--dry-run")
    assert ran.returncode == 0
    path = user_file(scratch, "codex")
    assert not path.exists()
    assert ran.stdout.startswith("--- /dev/null\n+++ " + str(path))
    assert f'+            "command": "{EXE} SessionStart codex",' in ran.stdout.splitlines()
    assert "dry run" in ran.stdout
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": {}}\n')
    ran = scratch.cli("uninstall", "codex", "--dry-run")
    assert "nothing to remove" in ran.stdout
    scratch.cli("install", "codex")
    installed = path.read_bytes()
    ran = scratch.cli("uninstall", "codex", "--dry-run")
    assert ran.returncode == 0 and "\n-" in ran.stdout
    assert path.read_bytes() == installed


def test_mode_kept_and_symlink_followed(scratch: Scratch) -> None:
    real = scratch.tmp / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    real.chmod(0o600)
    link = user_file(scratch, "claude")
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    assert scratch.cli("install", "claude").returncode == 0
    assert link.is_symlink()
    assert commands_in(json.loads(real.read_text()))
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    backup = Path(str(real) + ".lich-hook.bak")
    assert backup.read_text() == '{"model": "opus"}\n'
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600


def test_crush_project_prefers_the_hidden_file(scratch: Scratch) -> None:
    hidden = scratch.project / ".crush.json"
    hidden.write_text("{}\n")
    assert scratch.cli("install", "crush", "--scope", "project").returncode == 0
    assert commands_in(json.loads(hidden.read_text()))
    assert not (scratch.project / "crush.json").exists()


def test_antigravity_named_hook_is_ours_and_others_stay(scratch: Scratch) -> None:
    path = user_file(scratch, "antigravity")
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "guard": {"PreToolUse": [{"matcher": "run_command", "hooks": [{"command": "g"}]}]},
                "lich": {"PreInvocation": [{"type": "command", "command": "lich-hook x y"}]},
                "stray": {
                    "PreInvocation": [
                        {"type": "command", "command": "lich-hook PreInvocation antigravity"}
                    ]
                },
            },
            indent=2,
        )
    )
    assert scratch.cli("install", "antigravity").returncode == 0
    document = json.loads(path.read_text())
    assert list(document) == ["guard", "lich"]
    assert document["lich"] == expected("antigravity")["lich"]  # type: ignore[index]
    assert document["guard"]["PreToolUse"][0]["hooks"] == [{"command": "g"}]


# --- the written command runs the way each harness runs it ---------------------------

PAYLOADS: dict[str, tuple[str, dict[str, object]]] = {
    "claude": ("SessionStart", {"session_id": "claude-1", "source": "startup"}),
    "codex": ("SessionStart", {"session_id": "codex-1", "source": "startup"}),
    "crush": ("PreToolUse", {"session_id": "crush-1", "tool_name": "bash"}),
    "antigravity": ("PreInvocation", {"conversationId": "agy-1"}),
}


def written_command(path: Path, harness: str, event: str) -> str:
    document = json.loads(path.read_text())
    found = [c for c in commands_in(document) if c.split()[-2:] == [event, harness]]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("harness", HARNESSES)
def test_installed_command_reports_to_lich(scratch: Scratch, harness: str) -> None:
    assert scratch.cli("install", harness, "--scope", "project").returncode == 0
    path = project_file(scratch, harness)
    event, payload = PAYLOADS[harness]
    command = written_command(path, harness, event)
    with StandIn() as lich:
        # A PATH without our venv: the registration must not need it.
        env = {**scratch.env, **lich.env("card-7"), "PATH": "/usr/bin:/bin"}
        # Antigravity runs hooks from the folder holding hooks.json; the others from the project.
        cwd = path.parent if harness == "antigravity" else scratch.project
        ran = run_command(command, {**payload, "cwd": str(cwd)}, env, cwd=cwd)
        received = lich.wait(1)
    assert ran.returncode == 0
    assert ran.stdout == (b"{}" if harness == "antigravity" else b"")
    assert len(received) == 1
    assert received[0].status == 204
    assert received[0].accepted == {
        "session_id": "card-7",
        "provider_session_id": next(v for k, v in payload.items() if k != "source"),
        "provider": harness,
    }


def test_paths_with_spaces_are_quoted(scratch: Scratch) -> None:
    assert ours.quote("/a b/lich-hook") == "'/a b/lich-hook'"
    command = ours.with_executable({"command": "lich-hook SessionStart claude"}, "/a b/lich-hook")
    assert command == {"command": "'/a b/lich-hook' SessionStart claude"}
    assert ours.is_ours(command)
    assert not ours.is_ours({"command": "lich-hook-helper SessionStart"})
    assert not ours.is_ours({"command": "echo lich-hook SessionStart"})
    assert not ours.is_ours({"command": "lich-hook status-line"})
    assert not ours.is_ours({"command": "lich-hook Stop claude && notify-send x"})
    assert not ours.is_ours({"command": "lich-hook Stop claude 2>/dev/null"})
    assert ours.is_ours({"command": "lich-hook session-start"})


def test_new_files_get_the_usual_mode(scratch: Scratch) -> None:
    assert scratch.cli("install", "claude").returncode == 0
    mode = stat.S_IMODE(user_file(scratch, "claude").stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_a_second_registration_is_pointed_out(scratch: Scratch) -> None:
    assert scratch.cli("install", "codex", "--scope", "project").returncode == 0
    ran = scratch.cli("install", "codex")
    assert ran.returncode == 0
    assert f"Note: Codex also runs lich-hook from {project_file(scratch, 'codex')}" in ran.stdout


def test_the_status_line_snippet_is_json_for_a_path_with_quotes() -> None:
    """The printed statusLine lines are pasted into settings.json as they are."""
    import shlex

    exe = '/opt/it\'s "mine"/bin/lich-hook'
    lines = harnesses.HARNESSES["claude"].next_steps("user", ours.quote(exe))
    snippet = next(line for line in lines if '"statusLine"' in line)
    status = json.loads("{" + snippet.strip() + "}")["statusLine"]
    assert shlex.split(status["command"]) == [exe, "status-line"]
    wrapped = next(line for line in lines if "<your command>" in line)
    command = json.loads(wrapped[wrapped.index('"') : wrapped.rindex('"') + 1])
    assert shlex.split(command)[:3] == [exe, "status-line", "--"]
