"""Every registration of ours a harness could run, and what stops it running (a `Blocker`): one walk
for doctor and install, so they never disagree about where a harness looks."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from lich_hooks.human.settings import claude_plugins, codex_state, jsontext, ours, registrations
from lich_hooks.human.settings.commandline import parse
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.kinds import Harness as AnyHarness
from lich_hooks.human.settings.kinds import Plan
from lich_hooks.human.settings.module_file import ModuleHarness
from lich_hooks.human.settings.settings_file import SettingsHarness as Harness

PLUGIN_SCAN_DEPTH = 7
# A plugin folder is a clone of this repository: the names of its registration files.
_SHIPPED = registrations.files().items()
PLUGIN_FILE_NAMES = {os.path.basename(path) for path, value in _SHIPPED if ours.our_commands(value)}


@dataclass(frozen=True)
class Blocker:
    """Why the harness will not run our entries in a file, and what to do about it."""

    summary: str
    fix: str
    switched_off: bool = False  # the user turned it off (not merely not yet trusted)


@dataclass(frozen=True)
class Found:
    """One settings or plugin file a harness reads, and what of ours is in it."""

    harness: Harness
    label: str  # "user settings", "project local settings", "plugin", …
    path: str  # as the harness names it
    document: object  # the parsed value; None when it did not parse
    error: str | None  # why it could not be read or parsed
    commands: tuple[str, ...]  # our commands in it, for this harness
    owner: str | None = None  # the plugin it belongs to ("lich-hooks@lich-hooks, user scope")
    blockers: tuple[Blocker, ...] = ()
    notes: tuple[str, ...] = ()  # per-command facts worth showing (e.g. "trusted")
    root: str | None = None  # a plugin's folder: what its ${…PLUGIN_ROOT} stands for
    scope: str | None = None  # a Claude Code plugin's install scope (user, project, local)

    @property
    def plugin(self) -> bool:
        return self.label == "plugin"

    @property
    def yields_to_install(self) -> bool:
        """A plugin running its own copy claims each event (hook/claim.py): never a second run."""
        launched = [parse(command) for command in self.commands]
        return self.plugin and bool(launched) and all(f and f.launcher for f in launched)

    @property
    def runs(self) -> bool:
        """The harness will run our entries here (whether they work is doctor's call)."""
        return bool(self.commands) and not self.blockers


def read_document(path: str, jsonc: bool) -> object:
    """A JSON(C) file's value; a JsonTextError saying why it could not be read."""
    from lich_hooks.human.settings import files

    try:
        # install's reader and limit: a FIFO or device in its place is refused, never waited on
        data = files.read_bytes(path) or b""
        parsed = jsontext.parse(data.decode("utf-8"), jsonc=jsonc)
    except (Refused, UnicodeDecodeError) as error:
        raise jsontext.JsonTextError(str(error)) from None
    return parsed.root.value if parsed.root else None


def plugin_files(root: str) -> list[str]:
    found = []
    base_depth = root.rstrip(os.sep).count(os.sep)
    for directory, subdirs, files in os.walk(root):
        if directory.count(os.sep) - base_depth >= PLUGIN_SCAN_DEPTH:
            subdirs[:] = []
        subdirs[:] = [d for d in subdirs if d not in (".git", "node_modules")]
        found += [os.path.join(directory, name) for name in files if name in PLUGIN_FILE_NAMES]
    return sorted(found)


def commands_in(document: object, harness: Harness, plugin: bool) -> list[str]:
    """Our commands in one file; in a plugin folder (every harness's files) this harness's only."""
    found = ours.our_commands(document)
    return [c for c in found if ours.provider(c) == harness.key] if plugin else found


class Walk:
    """One pass over every entry's `finds`; each file read once (the project may be the home)."""

    def __init__(self, environ: Mapping[str, str], project: str, ask: bool = False) -> None:
        self.environ = environ
        self.project = project
        self.ask = ask  # may ask a running harness (doctor's walk; never install's)
        self.found: list[Found] = []
        self.seen: set[str] = set()

    def read(
        self,
        harness: Harness,
        label: str,
        path: str,
        owner: str | None = None,
        blockers: tuple[Blocker, ...] = (),
        root: str | None = None,
        scope: str | None = None,
    ) -> Found | None:
        """The file as a Found (not yet added); None when it is absent or already read."""
        real = os.path.realpath(path)
        if real in self.seen or not os.path.isfile(path):
            return None
        self.seen.add(real)
        plugin = label == "plugin"
        try:
            document = read_document(path, jsonc=harness.jsonc or plugin)
        except jsontext.JsonTextError as error:
            return Found(harness, label, path, None, str(error), (), owner, blockers, root=root)
        commands = tuple(commands_in(document, harness, plugin))
        return Found(
            harness, label, path, document, None, commands, owner, blockers, root=root, scope=scope
        )

    def add(self, found: Found | None) -> None:
        if found is not None:
            self.found.append(found)


def settings_files(walk: Walk, harness: Harness) -> None:
    """Every settings file the harness reads, as they are: no plugins, no trust."""
    for label, path in harness.places(walk.environ, walk.project):
        walk.add(walk.read(harness, label, path))


def claude_code(walk: Walk, harness: Harness) -> None:
    """Claude Code: its settings files, and each installed plugin's hook files (enabled?)."""
    settings_files(walk, harness)
    places = [path for _, path in harness.places(walk.environ, walk.project)]
    for plugin in claude_plugins.installed(walk.environ, walk.project, places):
        blockers: tuple[Blocker, ...] = ()
        if not plugin.enabled:
            scope = "" if plugin.scope == "user" else f" --scope {plugin.scope}"
            why = f"{plugin.id} is installed but disabled: Claude Code does not run it"
            blockers = (
                Blocker(why, f"claude plugin enable {plugin.id}{scope}", switched_off=True),
            )
        for path in plugin.hook_files:
            owner = plugin.describe()
            walk.add(walk.read(harness, "plugin", path, owner, blockers, plugin.root, plugin.scope))


def codex(walk: Walk, harness: Harness) -> None:
    """Codex: its hooks.json files and plugins, each hook judged by its trust in config.toml."""
    config = codex_state.Config.load(walk.environ)
    answer = codex_state.ask_codex(walk.environ, [walk.project]) if walk.ask else None
    untrusted = Blocker(
        "Codex loads a project's .codex/ only once you trust the project",
        "start `codex` in this project and trust the project when it asks",
    )
    places: list[tuple[Found | None, str, tuple[Blocker, ...]]] = []
    for label, path in harness.places(walk.environ, walk.project):
        trusted = not label.startswith("project") or config.project_trusted(walk.project)
        found = walk.read(harness, label, path)
        places.append((found, os.path.abspath(path), () if trusted else (untrusted,)))
    for plugin in codex_state.plugins(walk.environ, config):
        fix = f'set enabled = true under [plugins."{plugin.id}"] in {config.path}'
        off = Blocker(f"{plugin.id} is turned off in {config.path}", fix, switched_off=True)
        found = walk.read(harness, "plugin", plugin.path, plugin.id, root=plugin.root)
        places.append((found, plugin.source, () if plugin.enabled else (off,)))
    for found, source, blockers in places:
        if found is not None and found.error is None and found.commands:
            found = _with_trust(found, config, source, blockers, answer)
        walk.add(found)


def with_plugin_folder(walk: Walk, harness: Harness) -> None:
    """Its settings files, and every registration file in its folder of plugin clones."""
    settings_files(walk, harness)
    root = harness.plugins(walk.environ) if harness.plugins else None
    if root and os.path.isdir(root):
        for path in plugin_files(root):
            walk.add(walk.read(harness, "plugin", path))


def _with_trust(
    found: Found,
    config: codex_state.Config,
    source: str,
    blockers: tuple[Blocker, ...],
    answer: dict[str, dict[str, object]] | None,
) -> Found:
    if config.error is not None:
        why = f"{config.path} does not parse ({config.error}): Codex will not start"
        blockers += (Blocker(why, f"fix {config.path}"),)
    elif config.hooks_off():
        why = f"{config.path} turns hooks off ([features] hooks = false)"
        blockers += (Blocker(why, f"remove that line from {config.path}", switched_off=True),)
    notes = []
    for verdict in codex_state.judge_trust(config, source, found.document, ours.is_ours, answer):
        argv = ours.command_argv(verdict.command) or ours.split(verdict.command)
        line = f"{' '.join(argv[1:])}: {verdict.summary}"
        if verdict.runs:
            notes.append(line)
        else:
            blockers += (Blocker(line, codex_state.TRUST_FIX),)
    return replace(found, blockers=blockers, notes=tuple(notes))


def discover(
    environ: Mapping[str, str], project: str, harnesses: Iterable[Harness], ask: bool = False
) -> list[Found]:
    """Every existing settings or plugin file of these harnesses, each read once, in their order."""
    walk = Walk(environ, project, ask)
    order: dict[str, int] = {}
    for harness in harnesses:
        order[harness.key] = len(order)
        (harness.finds or settings_files)(walk, harness)
    return sorted(walk.found, key=lambda item: order[item.harness.key])


def also_registered(
    harness: AnyHarness, plan: Plan, environ: Mapping[str, str], project: str
) -> list[str]:
    """install's note for each other file of this harness with our commands that the user has not
    switched off (a plugin that yields to install aside): events would run twice."""
    if isinstance(harness, ModuleHarness):
        return harness.also_loaded(plan, environ, project)
    assert isinstance(harness, Harness)
    others = [
        os.path.realpath(item.path)
        for item in discover(environ, project, [harness])
        if item.commands
        and not item.yields_to_install
        and not any(blocker.switched_off for blocker in item.blockers)
    ]
    return [
        f"Note: {harness.title} also runs lich-hook from {other}; every event would run it "
        f"twice. Keep one (lich-hook uninstall {harness.key} --scope …, or remove the plugin)."
        for other in others
        if other != plan.path
    ]
