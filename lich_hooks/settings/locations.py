"""The folders harnesses keep their configuration in, derived from one `environ`.

Each harness's configuration folder (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
`XDG_CONFIG_HOME`, `PI_CODING_AGENT_DIR`, …) is derived here and only here,
so tests (and `doctor`) can point every harness at a scratch home. The
registry (harnesses.py) builds each settings or module path from these.
"""

from __future__ import annotations

import os

from lich_hooks.state import location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def home(environ: Mapping[str, str]) -> str:
    """The home the hooks keep their state under (state/location.py: HOME only when
    absolute; unset or empty, the account's), so a relative HOME never puts a
    user's settings under the working directory."""
    found = location.home(environ)
    if found is None:
        from lich_hooks.settings.ours import Refused

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


def config_home(environ: Mapping[str, str]) -> str:
    """$XDG_CONFIG_HOME (when absolute, as the XDG rules say), else ~/.config: opencode's."""
    return location.absolute(environ.get("XDG_CONFIG_HOME")) or os.path.join(
        home(environ), ".config"
    )


def omp_agent_dir(environ: Mapping[str, str]) -> str:
    """omp's agent folder: $PI_CODING_AGENT_DIR (when absolute), else ~/.omp/agent."""
    return location.absolute(environ.get("PI_CODING_AGENT_DIR")) or os.path.join(
        home(environ), ".omp", "agent"
    )
