"""Which Claude Code plugins run here, from its own records, not the folders under `plugins/` that
uninstall and disable leave behind (docs/troubleshooting.md, the plugin row)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lich_hooks.base.safefile import same_file
from lich_hooks.human.settings import files
from lich_hooks.human.settings.folders import claude_config_dir

ORPHANED_MARK = ".orphaned_at"


@dataclass(frozen=True)
class Plugin:
    """One installed plugin entry that applies to this project."""

    id: str  # "<plugin>@<marketplace>"
    scope: str  # user, project, local
    root: str  # the folder Claude Code runs it from (read_from)
    enabled: bool
    hook_files: tuple[str, ...]  # absolute paths of its hook registration files

    def describe(self) -> str:
        return f"{self.id}, {self.scope} scope"

    @property
    def name(self) -> str:
        return self.id.partition("@")[0]

    @property
    def marketplace(self) -> str:
        return self.id.partition("@")[2]

    @property
    def present(self) -> bool:
        """Its folder exists (a deleted clone it was added from does not)."""
        return os.path.isdir(self.root)


def enabled_ids(settings: Sequence[str]) -> dict[str, bool]:
    """enabledPlugins merged over the user, project and local settings files, in that order."""
    merged: dict[str, bool] = {}
    for path in settings:
        document = files.read_json(path)
        flags = document.get("enabledPlugins") if isinstance(document, dict) else None
        if isinstance(flags, dict):
            merged.update({k: v is True for k, v in flags.items() if isinstance(k, str)})
    return merged


def hook_files(root: str) -> tuple[str, ...]:
    """The plugin's hooks/hooks.json and any hook files its manifest names."""
    found = [os.path.join(root, "hooks", "hooks.json")]
    manifest = files.read_json(os.path.join(root, ".claude-plugin", "plugin.json"))
    named = manifest.get("hooks") if isinstance(manifest, dict) else None
    for item in [named] if isinstance(named, str) else named if isinstance(named, list) else []:
        if isinstance(item, str):
            found.append(os.path.normpath(os.path.join(root, item)))
    return tuple(dict.fromkeys(path for path in found if os.path.isfile(path)))


def read_from(config: str, plugin_id: str, install_path: str) -> str:
    """The folder Claude Code runs it from: for a marketplace added from a local folder, the
    plugin's `source` there (the folder when unreadable); else the cached copy."""
    name, _, market = plugin_id.partition("@")
    known = files.read_json(os.path.join(config, "plugins", "known_marketplaces.json"))
    entry = known.get(market) if isinstance(known, dict) else None
    source = entry.get("source") if isinstance(entry, dict) else None
    if not isinstance(source, dict) or source.get("source") != "directory":
        return install_path
    folder = source.get("path")
    if not isinstance(folder, str) or not os.path.isabs(folder):
        return install_path
    manifest = files.read_json(os.path.join(folder, ".claude-plugin", "marketplace.json"))
    plugins = manifest.get("plugins") if isinstance(manifest, dict) else None
    for item in plugins if isinstance(plugins, list) else []:
        if isinstance(item, dict) and item.get("name") == name:
            relative = item.get("source")
            if isinstance(relative, str) and not os.path.isabs(relative):
                return os.path.normpath(os.path.join(folder, relative))
            return install_path  # a remote source inside a local marketplace: the copy
    return folder


def installed(environ: Mapping[str, str], project: str, settings: Sequence[str]) -> list[Plugin]:
    """Every plugin installed for this project, enabled or not, orphaned caches left out; one
    whose folder is gone is listed, not `present`."""
    config = claude_config_dir(environ)
    record = files.read_json(os.path.join(config, "plugins", "installed_plugins.json"))
    plugins = record.get("plugins") if isinstance(record, dict) else None
    if not isinstance(plugins, dict):
        return []
    enabled = enabled_ids(settings)
    found = []
    for plugin_id, entries in plugins.items():
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            scope, root = entry.get("scope"), entry.get("installPath")
            where = entry.get("projectPath")
            if not isinstance(scope, str) or not isinstance(root, str) or not os.path.isdir(root):
                continue
            if scope != "user" and not (isinstance(where, str) and same_file(where, project)):
                continue  # installed for another project
            if os.path.exists(os.path.join(root, ORPHANED_MARK)):
                continue
            runs = read_from(config, plugin_id, root)
            hooks = hook_files(runs) if os.path.isdir(runs) else ()
            found.append(Plugin(plugin_id, scope, runs, enabled.get(plugin_id, False), hooks))
    return found
