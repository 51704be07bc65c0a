"""Each harness's configuration folder, from one environ (tests and doctor point them at a
scratch home); the HOME rule is base/homes.py's."""

from __future__ import annotations

import os
from collections.abc import Mapping

from lich_hooks.base import homes
from lich_hooks.base.homes import absolute, home
from lich_hooks.human.settings.errors import Refused


def settings_home(environ: Mapping[str, str]) -> str:
    """home(), or Refused: a relative HOME must never put settings under the working directory."""
    found = home(environ)
    if found is None:
        raise Refused(
            "no home directory: HOME is a relative path, or unset and the account has "
            "none; set HOME to an absolute path, or use --scope project"
        )
    return found


def claude_config_dir(environ: Mapping[str, str]) -> str:
    """Claude Code's user folder: settings.json, plugins/ (CLAUDE_CONFIG_DIR moves it)."""
    return environ.get("CLAUDE_CONFIG_DIR") or os.path.join(settings_home(environ), ".claude")


def codex_home(environ: Mapping[str, str]) -> str:
    """Codex's user folder: config.toml, hooks.json, plugins/ (base/homes.py's, or Refused)."""
    found = homes.codex_home(environ)
    return found if found is not None else os.path.join(settings_home(environ), ".codex")


def config_home(environ: Mapping[str, str]) -> str:
    """$XDG_CONFIG_HOME (when absolute, as the XDG rules say), else ~/.config: opencode's."""
    return absolute(environ.get("XDG_CONFIG_HOME")) or os.path.join(
        settings_home(environ), ".config"
    )


def omp_agent_dir(environ: Mapping[str, str]) -> str:
    """omp's agent folder: $PI_CODING_AGENT_DIR (when absolute), else ~/.omp/agent."""
    return absolute(environ.get("PI_CODING_AGENT_DIR")) or os.path.join(
        settings_home(environ), ".omp", "agent"
    )
