"""`lich-hook install` / `uninstall`, run as the real console script on scratch files."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from lich_hooks.base.harnesses import default_stdout
from lich_hooks.human.settings import commandline, ours, registry
from lich_hooks.human.settings.scenarios import Demo
from lich_hooks.human.standin.server import StandIn
from tests.operator.conftest import REPO, Scratch
from tests.spine.helpers import REPORTING
from tests.support.runner import LICH_HOOK, run_command

# Every settings harness in the registry, and its locations from its own entry; that those
# are the ones docs/install.md gives is test_every_location_is_documented's.
HARNESSES = list(registry.SETTINGS)
EXE = str(LICH_HOOK)
INSTALL_MD = Path(__file__).resolve().parents[2] / "docs" / "install.md"


def user_file(box: Scratch, harness: str) -> Path:
    return Path(registry.SETTINGS[harness].path("user", box.env, str(box.project)))


def project_file(box: Scratch, harness: str) -> Path:
    return Path(registry.SETTINGS[harness].path("project", box.env, str(box.project)))


@pytest.mark.parametrize("key", list(registry.HARNESSES))
def test_every_location_is_documented(key: str) -> None:
    """Each entry's default files, as docs/install.md spells them (`~/…`, `.…/…`)."""
    text = INSTALL_MD.read_text(encoding="utf-8")
    entry = registry.HARNESSES[key]
    for scope, root, shown in (("user", "/h", "~/"), ("project", "/p", "")):
        path = entry.path(scope, {"HOME": "/h"}, "/p")  # type: ignore[arg-type]
        assert path.startswith(root + "/"), path
        spelled = shown + path[len(root) + 1 :]
        assert f"`{spelled}`" in text, spelled


def commands_in(document: object) -> list[str]:
    return ours.our_commands(document)


def expected(harness: str, path: Path | None = None) -> object:
    """The registration install writes into `path`, its commands running EXE."""
    where = os.path.realpath(path) if path is not None else None
    return registry.SETTINGS[harness].desired(EXE, where)


def program_of(command: str) -> str:
    found = commandline.parse(command)
    assert found is not None, command
    return found.program


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
    assert document == expected(harness, path)
    assert commands_in(document)
    assert all(program_of(command) == EXE for command in commands_in(document))
    assert str(path) in ran.stdout
    assert not Path(str(path) + ".lich-hook.bak").exists()  # nothing to back up
    assert ran.stderr == ""


def test_install_says_what_it_did_and_what_next_and_verbose_adds_the_commands(
    scratch: Scratch,
) -> None:
    """Three ~600-character shell commands were printed where a person needs what happened and
    what to do next; they are --verbose's."""
    path = user_file(scratch, "claude")
    ran = scratch.cli("install", "claude")
    assert ran.returncode == 0, ran.stderr
    said = ran.stdout.splitlines()
    assert said[:2] == [
        f"Installed lich-hook's entries for Claude Code (user scope): {path}",
        "Next: start a new Claude Code session (or review them with /hooks).",
    ]
    # docs/install.md shows the same two lines
    page = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    shown = page.split("`install` says what it did and what to do next:\n\n```\n", 1)[1]
    assert shown.split("```", 1)[0].replace("/home/you", str(scratch.home)).splitlines() == said[:2]
    assert "runs:" not in ran.stdout and "SessionStart" not in ran.stdout
    assert scratch.cli("uninstall", "claude").returncode == 0
    verbose = scratch.cli("install", "claude", "--verbose").stdout
    document = json.loads(path.read_text())
    assert [line for line in verbose.splitlines() if line.startswith("  runs: ")] == [
        f"  runs: {command}" for command in dict.fromkeys(commands_in(document))
    ]


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
    assert sorted(commands_in(document)) == sorted(commands_in(expected("claude", path)))
    assert hooks["SessionStart"][0] == expected("claude", path)["hooks"]["SessionStart"][0]  # type: ignore[index]
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


def theirs(harness: str) -> object:
    """The harness's own registration shape with someone else's commands (and name) in it."""

    def swap(value: object) -> object:
        if isinstance(value, dict):
            return {k: "echo theirs" if k == "command" else swap(v) for k, v in value.items()}
        return [swap(item) for item in value] if isinstance(value, list) else value

    entry = registry.SETTINGS[harness]
    document = swap(entry.registration())
    assert isinstance(document, dict)
    if entry.named_hook is not None:
        document = {"theirs": document[entry.named_hook]}
    return document


@pytest.mark.parametrize("harness", HARNESSES)
def test_install_then_uninstall_restores_a_file_with_foreign_hooks(
    scratch: Scratch, harness: str
) -> None:
    foreign = theirs(harness)
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
    assert f"|| {EXE} PreToolUse crush 2>/dev/null ||" in new
    assert "Already installed" in scratch.cli("install", "crush").stdout
    assert scratch.cli("uninstall", "crush").returncode == 0
    assert path.read_text() == text


def test_dry_run_prints_a_diff_and_writes_nothing(scratch: Scratch) -> None:
    ran = scratch.cli("install", "codex", "--dry-run")
    assert ran.returncode == 0
    path = user_file(scratch, "codex")
    assert not path.exists()
    assert ran.stdout.startswith("--- /dev/null\n+++ " + str(path))
    assert "SessionStart codex 2>/dev/null" in ran.stdout
    assert f"{EXE} " in ran.stdout
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
    assert document["lich"] == expected("antigravity", path)["lich"]  # type: ignore[index]
    assert document["guard"]["PreToolUse"][0]["hooks"] == [{"command": "g"}]


# --- the written command runs the way each harness runs it ---------------------------


def written_command(path: Path, harness: str, event: str) -> str:
    document = json.loads(path.read_text())
    found = [c for c in commands_in(document) if ours.command_argv(c)[1:] == [event, harness]]  # type: ignore[index]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("harness", HARNESSES)
def test_installed_command_reports_to_lich(scratch: Scratch, harness: str) -> None:
    assert scratch.cli("install", harness, "--scope", "project").returncode == 0
    path = project_file(scratch, harness)
    event = REPORTING[harness]
    [scenario, *_] = [
        s
        for s in registry.SETTINGS[harness].scenarios(Demo(str(scratch.project), "/no/lich"))
        if s.event == event
    ]
    command = written_command(path, harness, event)
    with StandIn() as lich:
        # A PATH without our venv: the registration must not need it.
        env = {**scratch.env, **scenario.env, **lich.env("card-7"), "PATH": "/usr/bin:/bin"}
        ran = run_command(command, scenario.payload, env, cwd=scratch.project)
        received = lich.wait(1)
    assert ran.returncode == 0
    assert ran.stdout == default_stdout(harness, event)
    assert len(received) == 1
    assert received[0].status == 204
    accepted = received[0].accepted
    assert accepted is not None
    assert (accepted["session_id"], accepted["provider"]) == ("card-7", harness)
    assert accepted["provider_session_id"] in scenario.payload.values()


def test_paths_with_spaces_are_quoted(scratch: Scratch) -> None:
    assert ours.quote("/a b/lich-hook") == "'/a b/lich-hook'"
    command = ours.with_executable({"command": "lich-hook Stop claude"}, "/a b/lich-hook")
    assert command == {
        "command": "[ -z \"$LICH_PORT\" ] || '/a b/lich-hook' Stop claude 2>/dev/null || :"
    }
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
    lines = registry.HARNESSES["claude"].next_steps("user", ours.quote(exe))
    snippet = next(line for line in lines if '"statusLine"' in line)
    status = json.loads("{" + snippet.strip() + "}")["statusLine"]
    assert shlex.split(status["command"]) == [exe, "status-line"]
    wrapped = next(line for line in lines if "<your command>" in line)
    command = json.loads(wrapped[wrapped.index('"') : wrapped.rindex('"') + 1])
    assert shlex.split(command)[:3] == [exe, "status-line", "--"]
