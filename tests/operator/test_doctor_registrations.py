"""doctor counts a registration only when the harness will run it (docs/harnesses.md).

Each state here is one the real CLIs were measured to leave (tests/real_clients
prove the same states end to end, with reports): a Claude Code plugin that is
disabled or uninstalled, a Codex hook that is not trusted or trusted for an
older version of itself.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from lich_hooks.human.settings import registrations
from tests.operator.conftest import Scratch
from tests.operator.harness_state import (
    CODEX_PLUGIN_KEY,
    PLUGIN_ID,
    append_toml,
    claude_plugin,
    claude_uninstall,
    codex_plugin,
    codex_trust,
    codex_trust_hash,
)
from tests.operator.test_doctor import checks, in_lich, lich  # fixtures, shared

SHIPPED_CODEX = registrations.command("SessionStart", "codex")

__all__ = ["in_lich", "lich"]


def doctor(scratch: Scratch, env: dict[str, str]) -> tuple[int, dict[str, dict[str, object]]]:
    ran = scratch.cli("doctor", "--json", env=env)
    report = json.loads(ran.stdout)
    assert report["ok"] is (ran.returncode == 0)
    return ran.returncode, checks(report)


def text(scratch: Scratch, env: dict[str, str]) -> str:
    return scratch.cli("doctor", env=env).stdout


def test_an_enabled_claude_plugin_counts(scratch: Scratch, in_lich: dict[str, str]) -> None:
    claude_plugin(scratch)
    code, rows = doctor(scratch, in_lich)
    assert code == 0
    assert rows["Claude Code plugin"]["status"] == "ok"


def test_a_disabled_claude_plugin_does_not_count(scratch: Scratch, in_lich: dict[str, str]) -> None:
    claude_plugin(scratch, enabled=False)
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    row = rows["Claude Code plugin"]
    assert row["status"] == "fail"
    assert f"{PLUGIN_ID} is installed but disabled" in str(row["details"])
    assert row["fix"] == f"claude plugin enable {PLUGIN_ID}"
    assert "registrations" not in rows  # one cause, one failure
    # Beside a registration that works, the disabled plugin is only a warning.
    scratch.cli("install", "claude")
    code, rows = doctor(scratch, in_lich)
    assert code == 0
    assert rows["Claude Code plugin"]["status"] == "warn"
    assert "Claude Code duplicates" not in rows  # a disabled plugin does not run twice


def test_an_uninstalled_claude_plugin_left_in_the_cache_does_not_count(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    """Before: `[ok] Claude Code plugin` from the orphaned cache, and exit 0."""
    root = claude_plugin(scratch)
    claude_uninstall(scratch)
    assert (root / "hooks" / "hooks.json").exists()
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert "Claude Code plugin" not in rows
    assert rows["registrations"]["status"] == "fail"


def test_a_claude_plugin_for_another_project_or_a_marketplace_clone_does_not_count(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    claude_plugin(scratch, scope="project")
    other = scratch.tmp / "elsewhere"
    other.mkdir()
    assert scratch.cli("doctor", env=in_lich, cwd=other).returncode == 1
    assert scratch.cli("doctor", env=in_lich).returncode == 0  # in its own project it runs
    # A marketplace clone holds the files but is not an installed plugin.
    clone = scratch.home / ".claude" / "plugins" / "marketplaces" / "lich-hooks" / "hooks"
    clone.mkdir(parents=True)
    (clone / "hooks.json").write_text(json.dumps({"hooks": {}}))
    assert scratch.cli("doctor", env=in_lich, cwd=other).returncode == 1


def test_an_untrusted_codex_hook_fails_and_says_how_to_trust(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    """Before: `[ok] Codex user settings` and exit 0, while Codex ran nothing."""
    assert scratch.cli("install", "codex").returncode == 0
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    row = rows["Codex user settings"]
    assert row["status"] == "fail"
    assert "not trusted yet" in str(row["details"])
    assert "Hooks need review" in str(row["fix"]) and "/hooks" in str(row["fix"])
    printed = text(scratch, in_lich)
    assert "Trust all and continue" in printed
    assert printed.count("not trusted yet") == 1  # once in the row, not in its summary and below


def test_a_trusted_codex_hook_counts_and_a_stale_or_disabled_one_does_not(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    scratch.cli("install", "codex")
    hooks_json = os.path.join(scratch.home, ".codex", "hooks.json")
    key = f"{hooks_json}:session_start:0:0"
    command = json.loads(open(hooks_json).read())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    # Trusted for the command an older install wrote (another venv): stale.
    codex_trust(scratch, key, codex_trust_hash("/old/venv/bin/lich-hook SessionStart codex"))
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert "stale hash" in str(rows["Codex user settings"]["details"])
    # Trusted for this command: counts.
    config = scratch.home / ".codex" / "config.toml"
    config.unlink()
    codex_trust(scratch, key, codex_trust_hash(command))
    code, rows = doctor(scratch, in_lich)
    assert code == 0, rows
    assert rows["Codex user settings"]["status"] == "ok"
    assert "SessionStart codex: trusted" in str(rows["Codex user settings"]["details"])
    # Switched off in /hooks, or hooks off altogether: does not.
    config.unlink()
    codex_trust(scratch, key, codex_trust_hash(command), extra="enabled = false\n")
    assert doctor(scratch, in_lich)[0] == 1
    config.unlink()
    codex_trust(scratch, key, codex_trust_hash(command))
    append_toml(scratch, "\n[features]\nhooks = false\n")
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert "turns hooks off" in str(rows["Codex user settings"]["details"])


def test_a_codex_plugin_counts_once_trusted_under_its_plugin_key(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    codex_plugin(scratch)
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert rows["Codex plugin"]["status"] == "fail"
    assert CODEX_PLUGIN_KEY in str(rows["Codex plugin"]["details"])
    # What the TUI writes for a plugin hook: the hook's hash and the plugin's content hash.
    codex_trust(
        scratch,
        CODEX_PLUGIN_KEY,
        codex_trust_hash(registrations.command("SessionStart", "codex")),
        extra=f'trusted_content_hash = "sha256:{"0" * 64}"\n',
    )
    code, rows = doctor(scratch, in_lich)
    assert code == 0
    assert "after a plugin update Codex asks again" in str(rows["Codex plugin"]["details"])


def test_a_disabled_codex_plugin_does_not_count(scratch: Scratch, in_lich: dict[str, str]) -> None:
    codex_plugin(scratch, enabled=False)
    codex_trust(
        scratch, CODEX_PLUGIN_KEY, codex_trust_hash(registrations.command("SessionStart", "codex"))
    )
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert "turned off" in str(rows["Codex plugin"]["details"])


def test_codex_project_hooks_need_a_trusted_project(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    assert scratch.cli("install", "codex", "--scope", "project").returncode == 0
    hooks_json = scratch.project / ".codex" / "hooks.json"
    command = json.loads(hooks_json.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    codex_trust(scratch, f"{hooks_json}:session_start:0:0", codex_trust_hash(command))
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert "trust the project" in str(rows["Codex project settings"]["fix"])
    append_toml(scratch, f'\n[projects."{scratch.project}"]\ntrust_level = "trusted"\n')
    assert doctor(scratch, in_lich)[0] == 0


@pytest.mark.skipif(
    sys.version_info < (3, 11), reason="3.10's small reader skips what it cannot read"
)
def test_a_config_toml_that_does_not_parse_is_named(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    scratch.cli("install", "codex")
    append_toml(scratch, "[hooks.state\n")
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert "does not parse" in str(rows["Codex user settings"]["details"])


@pytest.mark.parametrize("padding", [0, 4096], ids=["short", "longer-than-its-head"])
def test_a_lich_hook_whose_python_is_gone_is_named_whatever_its_length(
    scratch: Scratch, padding: int
) -> None:
    """A Python upgrade removes the venv's interpreter: doctor names it, from the `#!` line,
    for a launcher of any length (one longer than the head doctor reads was once judged fine)."""
    from lich_hooks.human.commands.doctor.hooks import judge_command

    script = scratch.home / "venv" / "bin" / "lich-hook"
    script.parent.mkdir(parents=True)
    gone = scratch.home / "venv" / "bin" / "python3.11"
    script.write_text(f"#!{gone}\n# {'x' * padding}\nimport sys\n")
    script.chmod(0o755)
    row = judge_command(f"'{script}' SessionStart claude", None, scratch.env)
    assert row.status == "fail", row
    assert f"its Python {gone} is gone" in row.summary
