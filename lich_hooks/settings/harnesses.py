"""Every harness we register with: its name, its shipped file, and where its settings live.

One table, read by `install`/`uninstall` (which file to edit), `doctor` (which
files to look in) and `demo` (which shipped file to run). All locations come
from one `environ` mapping and one project directory, so tests (and `doctor`)
can point every harness at a scratch home. Each harness's configuration folder
(`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, …) is derived here and only here.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from lich_hooks import registrations
from lich_hooks.settings.ours import Refused
from lich_hooks.state import location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

SCOPES = ("user", "project")


def home(environ: Mapping[str, str]) -> str:
    """The home the hooks keep their state under (state/location.py: HOME only when
    absolute; unset or empty, the account's), so a relative HOME never puts a
    user's settings under the working directory."""
    found = location.home(environ)
    if found is None:
        raise Refused(
            "no home directory: HOME is a relative path, or unset and the account has "
            "none; set HOME to an absolute path, or use --scope project"
        )
    return found


def claude_config_dir(environ: Mapping[str, str]) -> str:
    """Claude Code's user folder: settings.json, plugins/ (CLAUDE_CONFIG_DIR moves it)."""
    return environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home(environ), ".claude")


def codex_home(environ: Mapping[str, str]) -> str:
    """Codex's user folder: config.toml, hooks.json, plugins/ (CODEX_HOME moves it)."""
    return environ.get("CODEX_HOME") or os.path.join(home(environ), ".codex")


def _claude_path(scope: str, environ: Mapping[str, str], project: str) -> str:
    if scope == "project":
        return os.path.join(project, ".claude", "settings.json")
    return os.path.join(claude_config_dir(environ), "settings.json")


def _codex_path(scope: str, environ: Mapping[str, str], project: str) -> str:
    if scope == "project":
        return os.path.join(project, ".codex", "hooks.json")
    return os.path.join(codex_home(environ), "hooks.json")


def _crush_path(scope: str, environ: Mapping[str, str], project: str) -> str:
    if scope == "project":
        # Crush reads `.crush.json` before `crush.json`: edit the one in use.
        for name in (".crush.json", "crush.json"):
            candidate = os.path.join(project, name)
            if os.path.exists(candidate):
                return candidate
        return os.path.join(project, "crush.json")
    override = environ.get("CRUSH_GLOBAL_CONFIG")
    if override:
        return os.path.join(override, "crush.json")
    if sys.platform == "win32" and environ.get("LOCALAPPDATA"):
        return os.path.join(environ["LOCALAPPDATA"], "crush", "crush.json")
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(home(environ), ".config")
    return os.path.join(base, "crush", "crush.json")


def _antigravity_path(scope: str, environ: Mapping[str, str], project: str) -> str:
    if scope == "project":
        return os.path.join(project, ".agents", "hooks.json")
    return os.path.join(home(environ), ".gemini", "config", "hooks.json")


def _claude_also(environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
    return [("project local settings", os.path.join(project, ".claude", "settings.local.json"))]


def _crush_also(environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
    # Crush loads both; install edits only the first that exists.
    return [
        ("project settings", os.path.join(project, name)) for name in (".crush.json", "crush.json")
    ]


def _antigravity_plugins(environ: Mapping[str, str]) -> str:
    return os.path.join(home(environ), ".gemini", "antigravity-cli", "plugins")


def _nothing_more(environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
    return []


@dataclass(frozen=True)
class Harness:
    """One harness: how it names itself, where its settings live, what we register."""

    key: str
    title: str
    shipped_file: str  # its registration file in this repository (what demo runs)
    registration: Callable[[], dict[str, object]]
    locate: Callable[[str, Mapping[str, str], str], str]  # (scope, environ, project) -> file
    jsonc: bool = False  # its settings accept comments and trailing commas
    also_reads: Callable[[Mapping[str, str], str], list[tuple[str, str]]] = field(
        default=_nothing_more
    )  # (label, path) of settings files it reads beside the one per scope
    # A folder of plugin clones to scan, for a harness whose plugin state we cannot
    # read (Claude Code's and Codex's are read from their own records: discovery.py).
    plugins: Callable[[Mapping[str, str]], str] | None = None

    def path(self, scope: str, environ: Mapping[str, str], project: str) -> str:
        """The settings file `install --scope <scope>` edits."""
        return self.locate(scope, environ, project)

    def places(self, environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
        """(label, path) of every settings file this harness reads hooks from."""
        found = [(f"{scope} settings", self.path(scope, environ, project)) for scope in SCOPES]
        return found + self.also_reads(environ, project)


HARNESSES: dict[str, Harness] = {
    harness.key: harness
    for harness in (
        Harness(
            key="claude",
            title="Claude Code",
            shipped_file="hooks/hooks.json",
            registration=lambda: {"hooks": registrations.claude_hooks()},
            locate=_claude_path,
            also_reads=_claude_also,
        ),
        Harness(
            key="codex",
            title="Codex",
            shipped_file="codex-hooks.json",
            registration=lambda: {"hooks": registrations.codex_hooks()},
            locate=_codex_path,
        ),
        Harness(
            key="crush",
            title="Crush",
            shipped_file="crush-hooks.json",
            registration=lambda: {"hooks": registrations.crush_hooks()},
            locate=_crush_path,
            jsonc=True,
            also_reads=_crush_also,
        ),
        Harness(
            key="antigravity",
            title="Antigravity",
            shipped_file="hooks.json",
            registration=registrations.antigravity_hooks,
            locate=_antigravity_path,
            plugins=_antigravity_plugins,
        ),
    )
}
