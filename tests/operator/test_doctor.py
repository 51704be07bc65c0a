"""`lich-hook doctor`, run as the real console script inside and outside a stand-in lich."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.human.settings import registrations
from lich_hooks.human.standin.server import StandIn
from tests.operator.conftest import Scratch
from tests.operator.harness_state import (
    CODEX_PLUGIN_KEY,
    claude_plugin,
    codex_plugin,
    codex_trust,
    codex_trust_hash,
)

SHIPPED_CODEX = registrations.command("SessionStart", "codex")

FAKE_LICH = """#!/bin/sh
case "$1" in
  version) echo "lich 9.9.9 (stand-in)" ;;
  *) echo "unexpected: $*" >&2; exit 3 ;;
esac
"""


def fake_lich(directory: Path, script: str = FAKE_LICH) -> Path:
    path = directory / "lich"
    path.write_text(script)
    path.chmod(0o755)
    return path


def checks(report: dict[str, object]) -> dict[str, dict[str, object]]:
    rows = report["checks"]
    assert isinstance(rows, list)
    return {row["name"]: row for row in rows}


@pytest.fixture
def lich() -> Iterator[StandIn]:
    with StandIn() as standin:
        yield standin


@pytest.fixture
def in_lich(scratch: Scratch, lich: StandIn) -> dict[str, str]:
    """A card's environment: the stand-in's variables and a stand-in `lich` executable."""
    return {
        **scratch.env,
        **lich.env("card-3"),
        "LICH_BIN": str(fake_lich(scratch.tmp)),
        "LICH_SUBAGENT_DEPTH": "0",
    }


def test_outside_lich_says_why_nothing_reports(scratch: Scratch) -> None:
    ran = scratch.cli("doctor")
    assert ran.returncode == 1
    assert "[FAIL] lich variables: missing LICH_PORT, LICH_TOKEN, LICH_SESSION_ID" in ran.stdout
    assert "[FAIL] registrations: no harness runs a working lich-hook" in ran.stdout
    # both routes: the plugin as the README adds it, and install
    plugin = "-> add the plugin (Claude Code: `claude plugin marketplace add <clone or git URL>`, "
    assert plugin + "then `claude plugin install lich-hooks@lich-hooks`; Codex: " in ran.stdout
    assert "or run `lich-hook install claude` (or codex, crush" in ran.stdout
    assert ran.stderr == ""
    report = json.loads(scratch.cli("doctor", "--json").stdout)
    assert report["ok"] is False
    rows = checks(report)
    assert rows["lich variables"]["status"] == "fail"
    assert rows["lich listener"]["status"] == "skip"
    assert rows["state directory"]["status"] == "ok"
    assert rows["interactive detection"]["status"] == "info"


def test_inside_a_lich_card_with_a_registration_all_is_well(
    scratch: Scratch, lich: StandIn, in_lich: dict[str, str]
) -> None:
    assert scratch.cli("install", "claude").returncode == 0
    ran = scratch.cli("doctor", env=in_lich)
    assert ran.returncode == 0, ran.stdout
    assert "Everything reporting needs is in place." in ran.stdout
    assert lich.token not in ran.stdout
    as_json = scratch.cli("doctor", "--json", env=in_lich)
    assert as_json.returncode == 0
    assert lich.token not in as_json.stdout
    report = json.loads(as_json.stdout)
    assert report["ok"] is True
    rows = checks(report)
    assert rows["lich variables"]["status"] == "ok"
    assert f"<redacted, {len(lich.token)} characters>" in str(rows["lich variables"]["summary"])
    assert rows["lich listener"]["status"] == "ok"
    assert rows["lich token"]["status"] == "ok"
    assert rows["LICH_BIN"]["status"] == "ok"
    assert "lich 9.9.9 (stand-in)" in str(rows["LICH_BIN"]["summary"])
    assert rows["Claude Code user settings"]["status"] == "ok"
    # The token probe sends an invalid body, so lich records nothing.
    assert all(received.status == 400 for received in lich.received)


def test_a_wrong_token_and_a_dead_port_are_named(scratch: Scratch, in_lich: dict[str, str]) -> None:
    scratch.cli("install", "codex")
    report = json.loads(scratch.cli("doctor", "--json", env={**in_lich, "LICH_TOKEN": "x"}).stdout)
    assert checks(report)["lich token"]["status"] == "fail"
    assert report["ok"] is False
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    report = json.loads(
        scratch.cli("doctor", "--json", env={**in_lich, "LICH_PORT": str(dead)}).stdout
    )
    assert checks(report)["lich listener"]["status"] == "fail"
    report = json.loads(
        scratch.cli("doctor", "--json", env={**in_lich, "LICH_PORT": "80; x"}).stdout
    )
    assert "is not a port" in str(checks(report)["lich listener"]["summary"])


def test_a_broken_lich_bin_fails(scratch: Scratch, in_lich: dict[str, str]) -> None:
    scratch.cli("install", "crush")
    broken = fake_lich(
        scratch.tmp / "home", "#!/bin/sh\necho 'lich: database locked' >&2\nexit 4\n"
    )
    for value, words in (
        (str(broken), "exited 4: lich: database locked"),
        ("lich", "not an absolute"),
    ):
        ran = scratch.cli("doctor", "--json", env={**in_lich, "LICH_BIN": value})
        assert ran.returncode == 1
        row = checks(json.loads(ran.stdout))["LICH_BIN"]
        assert row["status"] == "fail"
        assert words in str(row["summary"])


def test_registrations_that_cannot_run_are_failures(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "/gone/bin/lich-hook SessionStart claude",
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    ran = scratch.cli("doctor", env=in_lich)
    assert ran.returncode == 1
    assert "runs /gone/bin/lich-hook, which does not exist" in ran.stdout
    assert "-> register this installation by absolute path: lich-hook install claude" in ran.stdout


def test_plugin_files_bare_commands_and_duplicates(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    claude_plugin(scratch)
    scratch.cli("install", "claude", "--scope", "project")
    report = json.loads(scratch.cli("doctor", "--json", env=in_lich).stdout)
    rows = checks(report)
    assert rows["Claude Code plugin"]["status"] == "ok"  # `lich-hook` on PATH is this one
    assert "lich-hooks@lich-hooks, user scope" in str(rows["Claude Code plugin"]["summary"])
    assert rows["Claude Code project settings"]["status"] == "ok"
    assert rows["Claude Code duplicates"]["status"] == "warn"
    assert report["ok"] is True  # a warning is not a failure
    # Without our venv on PATH the plugin's bare command cannot run.
    report = json.loads(
        scratch.cli("doctor", "--json", env={**in_lich, "PATH": "/usr/bin:/bin"}).stdout
    )
    assert checks(report)["Claude Code plugin"]["status"] == "fail"


def test_an_unparsable_settings_file_is_reported(scratch: Scratch, in_lich: dict[str, str]) -> None:
    hooks = scratch.project / ".agents" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_text('{"lich": {"PreInvocation": [],}}')
    rows = checks(json.loads(scratch.cli("doctor", "--json", env=in_lich).stdout))
    assert rows["Antigravity project settings"]["status"] == "fail"
    assert "does not parse" in str(rows["Antigravity project settings"]["summary"])


def test_an_unwritable_state_dir_is_a_warning(scratch: Scratch, in_lich: dict[str, str]) -> None:
    scratch.cli("install", "claude")
    blocker = scratch.tmp / "file"
    blocker.write_text("")
    env = {**in_lich, "LICH_HOOK_STATE_DIR": str(blocker / "state")}
    report = json.loads(scratch.cli("doctor", "--json", env=env).stdout)
    assert checks(report)["state directory"]["status"] == "warn"
    assert report["ok"] is True


def test_interactive_detection_is_shown(scratch: Scratch, in_lich: dict[str, str]) -> None:
    env = {**in_lich, "CLAUDE_CODE_SESSION_ATTENDED": "0"}
    row = checks(json.loads(scratch.cli("doctor", "--json", env=env).stdout))[
        "interactive detection"
    ]
    assert "not interactive (like `claude -p`): CLAUDE_CODE_SESSION_ATTENDED=0" in str(
        row["summary"]
    )


def test_one_file_or_one_plugin_is_never_a_duplicate(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    # Run from the home itself: the user and project settings are the same file.
    assert scratch.cli("install", "claude", cwd=scratch.home).returncode == 0
    # One plugin installed at two scopes runs from one folder: one registration.
    claude_plugin(scratch, scope="user")
    claude_plugin(scratch, scope="local")
    report = json.loads(scratch.cli("doctor", "--json", env=in_lich, cwd=scratch.home).stdout)
    duplicates = checks(report)["Claude Code duplicates"]
    assert "registered in 2 places" in str(duplicates["summary"])  # settings + the plugin
    assert report["ok"] is True


def test_claude_hooks_switched_off_are_a_failure(scratch: Scratch, in_lich: dict[str, str]) -> None:
    scratch.cli("install", "claude")
    local = scratch.project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"disableAllHooks": true}\n')
    ran = scratch.cli("doctor", env=in_lich)
    assert ran.returncode == 1
    assert "sets disableAllHooks: Claude Code runs no hook at all" in ran.stdout


def test_a_token_json_or_repr_would_escape_is_still_never_shown(scratch: Scratch) -> None:
    """A token with a quote or a backslash must not slip past the scrub in an escaped form."""
    token = 'tok"en\\xyz'
    env = {
        **scratch.env,
        "LICH_TOKEN": token,
        "LICH_SESSION_ID": "card-3",
        "LICH_PORT": f"1{token}",
        "LICH_BIN": f"/nowhere/{token}/lich",
        "LICH_HOOK_LOG": f"/tmp/{token}.log",
    }
    forms = [token, json.dumps(token)[1:-1], repr(token)[1:-1], "en\\\\xyz", "en\\xyz"]
    for args in (("doctor",), ("doctor", "--json")):
        ran = scratch.cli(*args, env=env)
        assert ran.returncode == 1
        for form in forms:
            assert form not in ran.stdout, (args, form, ran.stdout)
        assert "<token>" in ran.stdout


def test_a_plugin_clone_counts_only_its_own_harness_registration(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    """A plugin folder is a clone of this repository: it carries every harness's file."""
    claude_plugin(scratch)
    codex_plugin(scratch)
    codex_trust(
        scratch, CODEX_PLUGIN_KEY, codex_trust_hash(registrations.command("SessionStart", "codex"))
    )
    report = json.loads(scratch.cli("doctor", "--json", env=in_lich).stdout)
    rows = report["checks"]
    assert isinstance(rows, list)
    for harness, title in (("claude", "Claude Code"), ("codex", "Codex")):
        plugin_rows = [row for row in rows if row["name"] == f"{title} plugin"]
        assert len(plugin_rows) == 1, plugin_rows
        assert plugin_rows[0]["status"] == "ok", plugin_rows
        for line in plugin_rows[0]["details"]["commands"]:
            assert line.split(":")[0].split()[-1] == harness, line
    # install's duplicate note names the Claude Code plugin file, not its siblings.
    ran = scratch.cli("install", "claude")
    notes = [line for line in ran.stdout.splitlines() if line.startswith("Note:")]
    assert len(notes) == 1, notes
    assert "/hooks/hooks.json;" in notes[0]


def test_crush_project_registrations_in_either_file_are_seen(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    """Crush loads both .crush.json and crush.json; ours may sit in the one install did not pick."""
    assert scratch.cli("install", "crush", "--scope", "project").returncode == 0
    (scratch.project / ".crush.json").write_text("{}\n")
    report = json.loads(scratch.cli("doctor", "--json", env=in_lich).stdout)
    assert checks(report)["Crush project settings"]["status"] == "ok"
    assert report["ok"] is True
