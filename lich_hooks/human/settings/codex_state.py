"""Which of our Codex hooks Codex will run: plugins enabled, hooks trusted. A running app-server is
asked (`hooks/list`, never starting one); else the trust hash is computed from config.toml
(docs/harnesses.md, Codex)."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import PurePath

from lich_hooks.human.settings import files
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.folders import codex_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

DEFAULT_TIMEOUT = 600  # seconds, what Codex uses for a handler without one
TRUST_FIX = (
    'trust it in Codex: start `codex` here and choose "Trust all and continue" when it '
    'shows "Hooks need review", or run /hooks and trust it'
)


def event_key(name: str) -> str:
    """`SessionStart` → `session_start`, as Codex names events in trust keys."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def trust_hash(event: str, matcher: object, handler: Mapping[str, object]) -> str:
    """The `trusted_hash` Codex expects for one command handler of one group."""
    timeout = handler.get("timeout")
    hook: dict[str, object] = {"type": "command", "command": handler.get("command"), "async": False}
    hook["timeout"] = max(timeout, 1) if isinstance(timeout, int) else DEFAULT_TIMEOUT
    if isinstance(handler.get("statusMessage"), str):
        hook["statusMessage"] = handler["statusMessage"]
    identity: dict[str, object] = {"event_name": event_key(event), "hooks": [hook]}
    if isinstance(matcher, str):
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


class Config:
    """`$CODEX_HOME/config.toml`, as far as trust and plugins go."""

    def __init__(self, path: str, data: dict[str, object], error: str | None = None) -> None:
        self.path = path
        self.data = data
        self.error = error  # why it could not be read (Codex will not start either)

    @classmethod
    def load(cls, environ: Mapping[str, str]) -> Config:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # its backport, a dependency on 3.10 only
            import tomli as tomllib

        path = os.path.join(codex_home(environ), "config.toml")
        try:
            data = files.read_bytes(path)
            return cls(path, {} if data is None else tomllib.loads(data.decode("utf-8")))
        except (Refused, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            return cls(path, {}, str(error))

    def table(self, *keys: str) -> dict[str, object]:
        value: object = self.data
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return value if isinstance(value, dict) else {}

    def hooks_off(self) -> bool:
        features = self.table("features")
        return features.get("hooks") is False or features.get("codex_hooks") is False

    def project_trusted(self, project: str) -> bool:
        """Codex loads a project's `.codex/` only in a project the user trusted."""
        trusted = {
            os.path.realpath(path)
            for path, entry in self.table("projects").items()
            if isinstance(entry, dict) and entry.get("trust_level") == "trusted"
        }
        here = PurePath(os.path.realpath(project))
        return any(str(folder) in trusted for folder in (here, *here.parents))


ASK_SECONDS = 2.0
ASK_LIMIT = 8 << 20  # bytes read from the app-server


def ask_codex(environ: Mapping[str, str], cwds: list[str]) -> dict[str, dict[str, object]] | None:
    """Each hook's `hooks/list` entry by key from the running app-server; None: no answer soon."""
    import socket

    from lich_hooks.base.codexcontrol import Connection

    try:
        with socket.socket(socket.AF_UNIX) as sock:
            server = Connection(sock, ASK_SECONDS, ASK_LIMIT)
            server.connect(codex_home(environ))
            server.upgrade()
            client = {"name": "lich-hook-doctor", "version": "1"}
            server.request(1, "initialize", {"clientInfo": client})["result"]
            server.notify("initialized")
            result = server.request(2, "hooks/list", {"cwds": cwds})["result"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    entries = result.get("data") if isinstance(result, dict) else None
    listed = [
        hook
        for entry in (entries if isinstance(entries, list) else [])
        for hook in (entry.get("hooks") if isinstance(entry, dict) else None) or []
    ]
    return {h["key"]: h for h in listed if isinstance(h, dict) and isinstance(h.get("key"), str)}


@dataclass(frozen=True)
class Verdict:
    """Will Codex run this handler of ours?"""

    command: str
    runs: bool
    summary: str


def judge_trust(
    config: Config,
    source: str,
    document: object,
    is_ours: Callable[[object], bool],
    answer: dict[str, dict[str, object]] | None = None,
) -> list[Verdict]:
    """The trust verdict for each of our handlers in a hooks document from `source`: Codex's
    own where its app-server listed the hook (`answer`, ask_codex's), else computed."""
    hooks = document.get("hooks") if isinstance(document, dict) else None
    verdicts: list[Verdict] = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else []:
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not is_ours(handler):
                    continue
                assert isinstance(group, dict) and isinstance(handler, dict)
                key = f"{source}:{event_key(event)}:{g}:{h}"
                listed = (answer or {}).get(key)
                if listed is not None:
                    runs, summary = _codex_says(listed)
                else:
                    expected = trust_hash(event, group.get("matcher"), handler)
                    runs, summary = _computed(config, key, expected)
                    why = "no Codex app-server running to ask" if answer is None else "not listed"
                    summary += f" (computed: {why})"
                verdicts.append(Verdict(str(handler.get("command")), runs, summary))
    return verdicts


CODEX_SAYS = {
    "trusted": (True, "trusted"),
    "managed": (True, "managed by your organisation"),
    "untrusted": (False, "not trusted yet: Codex skips it"),
    "modified": (False, "trusted for an earlier version of this hook: Codex skips it"),
}


def _codex_says(listed: dict[str, object]) -> tuple[bool, str]:
    runs, summary = CODEX_SAYS.get(str(listed.get("trustStatus")), (False, "unknown trust"))
    if listed.get("enabled") is False:
        runs, summary = False, "turned off in Codex's /hooks"
    return runs, f"{summary} (Codex's running app-server says so)"


def _computed(config: Config, key: str, expected: str) -> tuple[bool, str]:
    record = config.table("hooks", "state", key)
    if not record:
        return False, f"not trusted yet: Codex skips it (no record for {key})"
    if record.get("enabled") is False:
        return False, "turned off in Codex's /hooks"
    if record.get("trusted_hash") != expected:
        return False, "trusted for an earlier version of this hook (stale hash): Codex skips it"
    if "trusted_content_hash" in record:
        return True, "trusted (after a plugin update Codex asks again: trust it again then)"
    return True, "trusted"


@dataclass(frozen=True)
class Plugin:
    """One plugin configured in config.toml and present in Codex's plugin cache."""

    id: str
    enabled: bool
    root: str
    hooks_file: str  # as the manifest names it, relative to root ("codex-hooks.json")

    @property
    def source(self) -> str:
        return f"{self.id}:{self.hooks_file}"

    @property
    def path(self) -> str:
        return os.path.join(self.root, self.hooks_file)


def plugins(environ: Mapping[str, str], config: Config) -> list[Plugin]:
    """Configured plugins whose cached copy names a hooks file, one per plugin."""
    found = []
    cache = os.path.join(codex_home(environ), "plugins", "cache")
    for plugin_id, entry in config.table("plugins").items():
        enabled = not (isinstance(entry, dict) and entry.get("enabled") is False)  # unset: on
        name, _, marketplace = plugin_id.partition("@")
        if not name or not marketplace or os.sep in plugin_id:
            continue
        copies = glob.glob(os.path.join(glob.escape(cache), marketplace, name, "*"))
        for root in sorted(copies, reverse=True):
            hooks = _manifest_hooks(root)
            if hooks is not None:
                found.append(Plugin(plugin_id, enabled, root, hooks))
                break  # Codex keeps one version folder; with several, the last by name
    return found


def _manifest_hooks(root: str) -> str | None:
    manifest = files.read_json(os.path.join(root, ".codex-plugin", "plugin.json"))
    hooks = manifest.get("hooks") if isinstance(manifest, dict) else None
    if not isinstance(hooks, str):
        return None
    relative = os.path.normpath(hooks).replace(os.sep, "/")
    return None if relative.startswith("../") or os.path.isabs(relative) else relative
