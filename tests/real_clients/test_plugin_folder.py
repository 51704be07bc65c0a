"""doctor and the plugin copy Claude Code really runs, on the real CLI (throwaway HOME).

A marketplace added from a folder runs the plugin from that folder, not from the copy in
`plugins/cache/` (measured on 2.1.332: `claude plugin list` says "Read from:
<clone>/lich_hooks", the hook's command names the clone). doctor judges that folder; with
the clone gone Claude Code fails to load the plugin, and doctor's one fix
(`claude plugin marketplace remove lich-hooks`) ends it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.real_clients.test_plugin_route import (
    PLUGIN,
    Claude,
    add_plugin,
    claude,
    doctor,
    error_lines,
    make_clone,
    plugin_rows,
)

__all__ = ["claude"]

pytestmark = pytest.mark.real_client


def test_doctor_judges_the_clone_and_names_the_one_fix_once_it_is_gone(
    claude: Claude, tmp_path: Path
) -> None:
    clone = make_clone(tmp_path)
    add_plugin(claude, clone)
    listed = claude.cli("plugin", "list")
    assert f"Read from: {clone / 'lich_hooks'}" in listed, listed
    # the cached copy is not what runs: break it, and nothing changes
    [cache] = (Path(claude.base["HOME"]) / ".claude" / "plugins" / "cache").glob("*/*/*")
    (cache / "plugin" / "boot.py").unlink()
    env = claude.env()
    code, report, _ = doctor(env, claude.project)
    [row] = plugin_rows(report)
    assert (code, row["status"]) == (0, "ok"), row
    assert str(row["summary"]).startswith(str(clone / "lich_hooks"))
    inside = claude.session("plugin-folder-cache-broken", env)
    assert error_lines(inside) == []
    assert len(claude.reports()) == 1  # the clone ran

    shutil.move(clone, tmp_path / "moved-away")
    gone = claude.session("plugin-folder-clone-gone", env, hooks=False)
    assert error_lines(gone) == []  # Claude Code 2.1.332 skips a plugin it cannot load, silently
    assert len(claude.reports()) == 1  # and nothing of ours ran
    code, report, _ = doctor(env, claude.project)
    checks = report["checks"]
    assert isinstance(checks, list)
    failures = [c for c in checks if c["status"] == "fail"]
    assert code == 1 and [c["name"] for c in failures] == ["Claude Code plugin"], failures
    fix = str(failures[0]["fix"])
    assert fix.startswith("`claude plugin marketplace remove lich-hooks`"), fix
    claude.cli("plugin", "marketplace", "remove", "lich-hooks")  # the fix, as doctor gives it
    after = claude.session("plugin-folder-after-fix", claude.env(), hooks=False)
    assert error_lines(after) == []
    _, report, _ = doctor(env, claude.project)
    assert plugin_rows(report) == []
    # nothing of the removed plugin is judged; only the "nothing registered" fix names it, as
    # one of the ways to register (the README's plugin commands)
    rows = report["checks"]
    assert isinstance(rows, list)
    others = [c for c in rows if c["name"] != "registrations"]
    assert PLUGIN not in json.dumps(others)
