"""doctor checks the copy of the plugin Claude Code really runs, and names one cause once.

Measured on Claude Code 2.1.332 (throwaway HOME): after `claude plugin marketplace
add <clone>` and `claude plugin install lich-hooks@lich-hooks`,
`known_marketplaces.json` records `"source": {"source": "directory", "path": <clone>}`,
`installed_plugins.json` an `installPath` under `plugins/cache/`, and the hooks run
`<clone>/lich_hooks/plugin/lich-hook` (`claude plugin list`: "Read from:
<clone>/lich_hooks"); the cached copy is never run. With the clone gone the plugin
"failed to load" and no hook runs; `claude plugin marketplace remove lich-hooks`
uninstalls it. tests/real_clients/test_plugin_route.py runs the real CLI.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from lich_hooks.human.settings import registrations
from tests.operator.conftest import REPO, Scratch
from tests.operator.harness_state import PLUGIN_ID, claude_plugin, codex_plugin
from tests.operator.test_doctor import checks, in_lich, lich  # fixtures, shared

__all__ = ["in_lich", "lich"]

NO_LICH_HOOK_ON_PATH = "/usr/bin:/bin"  # a Python 3.10+, and no lich-hook


def doctor(scratch: Scratch, env: dict[str, str]) -> tuple[int, dict[str, dict[str, object]]]:
    ran = scratch.cli("doctor", "--json", env=env)
    report = json.loads(ran.stdout)
    return ran.returncode, checks(report)


def clone(scratch: Scratch) -> Path:
    """A clone of this repository, as a person has it: the shipped files and the package."""
    folder = scratch.tmp / "lich-hooks"
    registrations.write(str(folder))
    shutil.copytree(
        REPO / "lich_hooks",
        folder / "lich_hooks",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return folder


def added_from(scratch: Scratch, folder: Path) -> None:
    """What `claude plugin marketplace add <folder>` records."""
    known = scratch.home / ".claude" / "plugins" / "known_marketplaces.json"
    known.parent.mkdir(parents=True, exist_ok=True)
    known.write_text(
        json.dumps(
            {
                "lich-hooks": {
                    "source": {"source": "directory", "path": str(folder)},
                    "installLocation": str(folder),
                    "lastUpdated": "2026-12-01T14:45:13.261Z",
                }
            }
        )
    )


def test_a_folder_marketplace_is_checked_where_claude_code_runs_it(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    """Before: the cache held an older plugin (its hooks ran `lich-hook` from PATH), doctor
    judged that copy, said FAIL while reports arrived, and its fix uninstalled the plugin."""
    claude_plugin(scratch)  # the cached copy: the old plugin's `lich-hook` from PATH
    env = {**in_lich, "PATH": NO_LICH_HOOK_ON_PATH}
    code, rows = doctor(scratch, env)
    assert (code, rows["Claude Code plugin"]["status"]) == (1, "fail")  # the copy that runs
    folder = clone(scratch)
    added_from(scratch, folder)
    code, rows = doctor(scratch, env)
    row = rows["Claude Code plugin"]
    assert (code, row["status"]) == (0, "ok"), row
    hooks = folder / "lich_hooks" / "plugin" / "claude-hooks.json"
    assert str(row["summary"]).startswith(f"{hooks} ({PLUGIN_ID}, user scope)")
    assert "runs the plugin's own copy with /usr/bin/python3" in str(row["details"])
    assert "uninstall" not in json.dumps(rows)


def test_a_deleted_clone_is_one_failure_with_its_own_fix(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    claude_plugin(scratch)
    folder = clone(scratch)
    added_from(scratch, folder)
    shutil.rmtree(folder)
    code, rows = doctor(scratch, {**in_lich, "PATH": NO_LICH_HOOK_ON_PATH})
    assert code == 1
    failures = [name for name, row in rows.items() if row["status"] == "fail"]
    assert failures == ["Claude Code plugin"]
    row = rows["Claude Code plugin"]
    assert f"reads it from {folder}, which is gone" in str(row["summary"])  # its manifest too
    assert str(row["fix"]).startswith("`claude plugin marketplace remove lich-hooks`")


def test_a_disabled_plugin_or_an_untrusted_codex_plugin_is_one_failure(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    """Before: the right FAIL, plus "no harness runs a working lich-hook: run `lich-hook
    install claude`" — for a Codex trust problem too."""
    claude_plugin(scratch, enabled=False)
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert [n for n, r in rows.items() if r["status"] == "fail"] == ["Claude Code plugin"]
    assert rows["Claude Code plugin"]["fix"] == f"claude plugin enable {PLUGIN_ID}"
    for path in (scratch.home / ".claude").rglob("*.json"):
        path.unlink()
    codex_plugin(scratch)
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert [n for n, r in rows.items() if r["status"] == "fail"] == ["Codex plugin"]
    assert "install claude" not in json.dumps(rows)


def test_no_registration_at_all_is_the_one_generic_failure(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    code, rows = doctor(scratch, in_lich)
    assert code == 1
    assert [n for n, r in rows.items() if r["status"] == "fail"] == ["registrations"]
    assert "lich-hook install claude" in str(rows["registrations"]["fix"])


def test_a_copy_whose_package_does_not_load_is_named_incomplete(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    """The hook says so inside lich (boot.py); doctor, which asks boot.py the same, agrees."""
    claude_plugin(scratch)
    folder = clone(scratch)
    added_from(scratch, folder)
    shutil.rmtree(folder / "lich_hooks" / "hook" / "jobs")  # an interrupted copy or checkout
    code, rows = doctor(scratch, {**in_lich, "PATH": NO_LICH_HOOK_ON_PATH})
    row = rows["Claude Code plugin"]
    assert (code, row["status"]) == (1, "fail")
    assert "is incomplete (its package does not load)" in str(row["summary"])
    assert [n for n, r in rows.items() if r["status"] == "fail"] == ["Claude Code plugin"]


def test_doctor_reads_both_registered_forms(scratch: Scratch, in_lich: dict[str, str]) -> None:
    """The plain form an older release wrote and the guarded form `install` writes now:
    doctor judges what each runs (this installation, or a file that is gone), alike."""
    from lich_hooks.human.settings import commandline
    from tests.support.runner import LICH_HOOK

    settings = scratch.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    gone = str(scratch.tmp / "gone" / "bin" / "lich-hook")

    def plain(program: str) -> str:
        return f"{program} Stop claude"

    def guarded(program: str) -> str:
        return commandline.render(commandline.CARD, program, "Stop", "claude")

    forms = {"plain": plain, "guarded": guarded}
    for name, form in forms.items():
        for program, status in ((str(LICH_HOOK), "ok"), (gone, "fail")):
            group = {"hooks": [{"type": "command", "command": form(program), "timeout": 5}]}
            settings.write_text(json.dumps({"hooks": {"Stop": [group]}}))
            code, rows = doctor(scratch, in_lich)
            row = rows["Claude Code user settings"]
            assert row["status"] == status, (name, program, row)
            assert (code == 0) is (status == "ok"), (name, program)
            if status == "fail":
                assert "lich-hook install claude" in str(row["fix"]), row
