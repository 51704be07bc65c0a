"""The folders harnesses keep their configuration in, derived from one `environ`.

Each harness's configuration folder (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
`XDG_CONFIG_HOME`, `PI_CODING_AGENT_DIR`, …) is derived here and only here,
so tests (and `doctor`) can point every harness at a scratch home. The
registry (harnesses.py) builds each settings or module path from these.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or environ.get("USERPROFILE") or os.path.expanduser("~")


def claude_config_dir(environ: Mapping[str, str]) -> str:
    """Claude Code's user folder: settings.json, plugins/ (CLAUDE_CONFIG_DIR moves it)."""
    return environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home(environ), ".claude")


def codex_home(environ: Mapping[str, str]) -> str:
    """Codex's user folder: config.toml, hooks.json, plugins/ (CODEX_HOME moves it)."""
    return environ.get("CODEX_HOME") or os.path.join(home(environ), ".codex")


def _absolute(value: str | None) -> str | None:
    """An environment path, only when absolute: a relative one is invalid, never cwd-based."""
    return value if value and os.path.isabs(value) else None


def config_home(environ: Mapping[str, str]) -> str:
    """$XDG_CONFIG_HOME (when absolute, as the XDG rules say), else ~/.config: opencode's."""
    return _absolute(environ.get("XDG_CONFIG_HOME")) or os.path.join(home(environ), ".config")


def omp_agent_dir(environ: Mapping[str, str]) -> str:
    """omp's agent folder: $PI_CODING_AGENT_DIR (when absolute), else ~/.omp/agent."""
    return _absolute(environ.get("PI_CODING_AGENT_DIR")) or os.path.join(
        home(environ), ".omp", "agent"
    )
