"""Put a scratch home in the states the real CLIs leave it in, as tests/real_clients measure.

Claude Code 2.1.328 (`claude plugin marketplace add` + `claude plugin install`):
the plugin is copied to `plugins/cache/<marketplace>/<plugin>/<version>/`,
listed in `plugins/installed_plugins.json` with its scope, and switched on in
the scope's settings (`enabledPlugins`). `disable` writes `false` there;
`uninstall` drops the listing and leaves the cache with an `.orphaned_at` file.

Codex 0.171.0 (`codex plugin marketplace add` + `codex plugin add`): the plugin
is copied to `$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/` and
`[plugins."<id>"] enabled = true` goes into config.toml; trusting a hook (the
TUI's dialog or /hooks) adds `[hooks.state."<key>"] trusted_hash = …`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lich_hooks import __version__
from lich_hooks.human.settings import registrations
from tests.operator.conftest import Scratch
from tests.support.codex_trust import trusted_hash

PLUGIN_ID = "lich-hooks@lich-hooks"
CODEX_PLUGIN_KEY = f"{PLUGIN_ID}:codex-hooks.json:session_start:0:0"


def _cache(base: Path) -> Path:
    root = base / "plugins" / "cache" / "lich-hooks" / "lich-hooks" / __version__
    registrations.write(str(root))
    return root


def _merge_json(path: Path, key: str, values: dict[str, object]) -> None:
    document = json.loads(path.read_text()) if path.exists() else {}
    document.setdefault(key, {}).update(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2))


def claude_plugin(scratch: Scratch, scope: str = "user", enabled: bool = True) -> Path:
    """What `claude plugin install lich-hooks@lich-hooks --scope <scope>` leaves behind."""
    config = scratch.home / ".claude"
    root = _cache(config)
    entry: dict[str, object] = {"scope": scope, "installPath": str(root), "version": __version__}
    if scope != "user":
        entry["projectPath"] = str(scratch.project)
    record = config / "plugins" / "installed_plugins.json"
    document: dict[str, Any] = (
        json.loads(record.read_text()) if record.exists() else {"version": 2, "plugins": {}}
    )
    document["plugins"].setdefault(PLUGIN_ID, []).append(entry)
    record.write_text(json.dumps(document, indent=2))
    settings = {
        "user": config / "settings.json",
        "project": scratch.project / ".claude" / "settings.json",
        "local": scratch.project / ".claude" / "settings.local.json",
    }[scope]
    _merge_json(settings, "enabledPlugins", {PLUGIN_ID: enabled})
    return root


def claude_uninstall(scratch: Scratch) -> None:
    """`claude plugin uninstall`: the listing and the switch go, the cache stays, marked."""
    config = scratch.home / ".claude"
    record = config / "plugins" / "installed_plugins.json"
    document = json.loads(record.read_text())
    for entry in document["plugins"].pop(PLUGIN_ID):
        (Path(entry["installPath"]) / ".orphaned_at").write_text("1796043371788")
    record.write_text(json.dumps(document, indent=2))
    settings = json.loads((config / "settings.json").read_text())
    settings["enabledPlugins"].pop(PLUGIN_ID, None)
    (config / "settings.json").write_text(json.dumps(settings, indent=2))


def codex_trust_hash(command: str, timeout: int = 5, event: str = "session_start") -> str:
    """The trust hash the Codex TUI stores for one of our handlers (no matcher, like ours)."""
    handler = {"command": command, "timeout": timeout}
    if event == "session_start":  # ours carries its name (registrations.CODEX_STATUS_MESSAGE)
        handler["statusMessage"] = registrations.CODEX_STATUS_MESSAGE
    return trusted_hash(event, {}, handler)


def codex_config(scratch: Scratch) -> Path:
    return scratch.home / ".codex" / "config.toml"


def append_toml(scratch: Scratch, text: str) -> None:
    path = codex_config(scratch)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        handle.write(text)


def codex_trust(scratch: Scratch, key: str, trusted_hash: str, extra: str = "") -> None:
    """What "Trust all and continue" writes for one hook."""
    append_toml(scratch, f'\n[hooks.state."{key}"]\ntrusted_hash = "{trusted_hash}"\n{extra}')


def codex_plugin(scratch: Scratch, enabled: bool = True) -> Path:
    """What `codex plugin add lich-hooks@lich-hooks` leaves behind."""
    root = _cache(scratch.home / ".codex")
    flag = "true" if enabled else "false"
    append_toml(scratch, f'\n[plugins."{PLUGIN_ID}"]\nenabled = {flag}\n')
    return root
