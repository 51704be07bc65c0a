"""The two kinds of harness the registry holds, behind one interface.

A settings-file harness (Claude Code, Codex, Crush, Antigravity) runs command
hooks registered in its own JSON(C) settings file: ours are entries in it,
merged in and out by their command (ours.py), written back keeping every other
byte (jsontext.py). A module-file harness (opencode, omp) loads a module from a
folder: ours is a whole file, recognised by its first line (modules.py).

Both answer the same questions, so `install`, `uninstall`, `doctor` and `demo`
never ask which kind they hold: where the file is per scope (`path`), what an
install or uninstall would change (`plan`, a value, decided before any write,
raising Refused with the reason when it must not), the write (`apply`), what
the result runs, and which other registration would run every event twice.

What install promises, per kind (docs/install.md):
- settings: everyone else's entries, events and keys keep their meaning and
  their bytes wherever our edit does not pass through them; a file that does
  not parse, or has a shape we do not understand, is refused and left
  untouched; before a write the old file is copied next to it
  (`<name>.lich-hook.bak`) and the new one replaces it atomically with the old
  file's owner, group and mode; a symlinked settings file is written through
  the link; a FIFO or device is refused, and so is a file its owner made
  read-only unless --force (files.py);
- modules: a missing file is written, an older version of ours is replaced,
  and anything else at that path (someone's own file, a symlink, a folder) is
  refused and left untouched; `uninstall` removes only a file of ours and
  never the folders around it.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from lich_hooks.base.safefile import same_file
from lich_hooks.human.settings import discovery, files, install_record, jsontext, modules, ours
from lich_hooks.human.settings.ours import Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Literal

    from lich_hooks.human.settings.scenarios import Demo, Scenario
    from lich_hooks.human.settings.versions import Verified

    Scope = Literal["user", "project"]
    Action = Literal["write", "remove", "nothing"]
    Locate = Callable[[Scope, Mapping[str, str], str], str]  # (scope, environ, project) -> path
    Places = Callable[[Mapping[str, str], str], list[tuple[str, str]]]

SCOPES: tuple[Scope, ...] = ("user", "project")
WRITE: Action = "write"
REMOVE: Action = "remove"
NOTHING: Action = "nothing"
BACKUP_SUFFIX = ".lich-hook.bak"


class Plan:
    """What an install or uninstall would do to one file, before anything is written.

    `action` is WRITE (new or replaced text), REMOVE or NOTHING (already so;
    `why` may say what was left alone). `old_text` is None when no file is there.
    """

    def __init__(
        self,
        harness: Harness,
        scope: Scope,
        path: str,
        action: Action,
        old_text: str | None,
        new_text: str | None,
        had_ours: bool,
        why: str = "",
    ) -> None:
        self.harness = harness
        self.scope = scope
        self.path = path
        self.action = action
        self.old_text = old_text
        self.new_text = new_text
        self.had_ours = had_ours
        self.why = why
        # Where to note, once the write succeeded, which containers install
        # created in the file (install_record.py); `created` None: drop the note.
        self.environ: Mapping[str, str] | None = None
        self.created: set[tuple[str, ...]] | None = None

    def diff(self) -> str:
        old = (self.old_text or "").splitlines(keepends=True)
        new = (self.new_text or "").splitlines(keepends=True)
        before = self.path if self.old_text is not None else "/dev/null"
        after = self.path if self.new_text is not None else "/dev/null"
        lines = difflib.unified_diff(old, new, fromfile=before, tofile=after)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _nothing_more(environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
    return []


@dataclass(frozen=True)
class Harness:
    """One harness: its provider id, its name, and what a person is told about it.

    `next_steps(scope, executable)` are the lines `install` prints after a
    write (the executable as the shell spells it); `scenarios` what `demo`
    runs for it. Every entry has its own: nothing falls through to another's.
    """

    key: str
    title: str
    locate: Locate
    next_steps: Callable[[Scope, str], list[str]]
    scenarios: Callable[[Demo], list[Scenario]]
    # The releases the real-client tests ran (versions.py); None: never run, doctor says nothing.
    verified: Verified | None = None

    # The noun a person reads for what of ours is in the file.
    ours_noun = "lich-hook's entries"

    def path(self, scope: Scope, environ: Mapping[str, str], project: str) -> str:
        """The file `install --scope <scope>` writes."""
        return self.locate(scope, environ, project)

    @property
    def shown_as(self) -> str:
        """What demo names this harness's registration as."""
        raise NotImplementedError

    def shipped_commands(self) -> set[str]:
        """Every command the registration this package ships for it runs."""
        raise NotImplementedError

    def plan(
        self, scope: Scope, executable: str | None, environ: Mapping[str, str], project: str
    ) -> Plan:
        """What installing `executable` (None: uninstalling) would do; Refused: it must not."""
        raise NotImplementedError

    def apply(self, plan: Plan, force: bool) -> str | None:
        """Write the plan; the backup's path, if one was made. Refused, OSError: not written."""
        raise NotImplementedError

    def runs(self, plan: Plan, executable: str) -> list[str]:
        """The commands the file runs once the plan is written."""
        raise NotImplementedError

    def also_registered(self, plan: Plan, environ: Mapping[str, str], project: str) -> list[str]:
        """A note for each other registration of ours this harness runs (each event twice)."""
        raise NotImplementedError


@dataclass(frozen=True)
class SettingsHarness(Harness):
    """A harness with command hooks, registered in its own JSON(C) settings file."""

    shipped_file: str = ""  # its registration file in this repository (what demo runs)
    registration: Callable[[], dict[str, object]] = dict
    jsonc: bool = False  # its settings accept comments and trailing commas
    # (label, path) of settings files it reads beside the one per scope
    also_reads: Places = field(default=_nothing_more)
    # A folder of plugin clones to scan, for a harness whose plugin state we cannot
    # read (Claude Code's and Codex's are read from their own records: discovery.py).
    plugins: Callable[[Mapping[str, str]], str] | None = None
    # Every file of this harness that holds ours, and what stops it running there.
    finds: Callable[[discovery.Walk, SettingsHarness], None] = discovery.settings_files
    # A top-level key that, when true in one of its settings files, runs no hook at all.
    off_switch: str | None = None
    # A harness whose hooks are named objects: ours is the one of this name, as a whole.
    named_hook: str | None = None
    # Its own command that removes a plugin: {id} the plugin's, {scope} " --scope <s>" or "".
    plugin_remove: str | None = None

    def places(self, environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
        """(label, path) of every settings file this harness reads hooks from."""
        found = [(f"{scope} settings", self.path(scope, environ, project)) for scope in SCOPES]
        return found + self.also_reads(environ, project)

    @property
    def shown_as(self) -> str:
        return self.shipped_file

    def shipped_commands(self) -> set[str]:
        from lich_hooks.human.settings import registrations

        return set(ours.our_commands(registrations.files()[self.shipped_file]))

    def plan(
        self, scope: Scope, executable: str | None, environ: Mapping[str, str], project: str
    ) -> Plan:
        path = os.path.realpath(self.path(scope, environ, project))
        old_text = read_text(path)
        parsed = None
        document: object = None
        if old_text is not None:
            try:
                parsed = jsontext.parse(old_text, jsonc=self.jsonc)
            except jsontext.JsonTextError as error:
                raise Refused(
                    f"{path} does not parse ({error}); nothing was changed. "
                    "Fix the file (or move it aside) and run this again."
                ) from None
            document = parsed.root.value if parsed.root is not None else None
        had_ours = bool(ours.our_commands(document))
        unchanged = Plan(self, scope, path, NOTHING, old_text, old_text, had_ours)
        if executable is None and not had_ours:
            return unchanged
        new_document: object
        try:
            new_document = ours.merge(self, document, executable, path)
        except Refused as error:
            raise Refused(f"{path}: {error}; nothing was changed") from None
        made = install_record.read(environ, path)
        lost: set[tuple[str, ...]] = set()
        if executable is None:
            # What install found comes back: the containers it did not create stay.
            lost = set(install_record.containers(document)) - set(
                install_record.containers(new_document)
            )
            if made is not None:
                new_document = install_record.restore(new_document, document, lost - made)
        if parsed is not None and parsed.root is not None:
            if jsontext.same(parsed.root.value, new_document):
                return unchanged
            try:
                new_text = jsontext.edit(parsed, new_document, jsonc=self.jsonc)
            except jsontext.JsonTextError as error:
                if executable is not None or made is not None:
                    raise Refused(f"{path}: {error}; nothing was changed") from None
                # No record, and a comment on a container that removing ours
                # would delete: a person wrote there, so it stays.
                new_text = self._keeping_containers(parsed, document, new_document, lost, path)
        else:
            new_text = jsontext.dumps(new_document) + "\n"
        action = REMOVE if executable is None else WRITE
        result = Plan(self, scope, path, action, old_text, new_text, had_ours)
        result.environ = environ
        if executable is not None:
            result.created = (made or set()) | install_record.created(document, new_document)
        return result

    def _keeping_containers(
        self,
        parsed: jsontext.Parsed,
        document: object,
        new_document: object,
        lost: set[tuple[str, ...]],
        path: str,
    ) -> str:
        """The edit with the containers it would empty kept: the outermost first (an
        event's list inside a kept `"hooks"` may still go), then all of them."""
        failure: jsontext.JsonTextError | None = None
        for depth in (1, 2):
            kept = {where for where in lost if len(where) <= depth}
            restored = install_record.restore(new_document, document, kept)
            try:
                return jsontext.edit(parsed, restored, jsonc=self.jsonc)
            except jsontext.JsonTextError as error:
                failure = error
        raise Refused(f"{path}: {failure}; nothing was changed")

    def apply(self, plan: Plan, force: bool) -> str | None:
        """Backup first, then the new file, both keeping its owner, group and mode.

        A write that fails leaves the backup as it was before (none, or the
        previous one), so a refused install leaves no trace; OSError says why.
        """
        assert plan.new_text is not None
        files.check_writable(plan.path, force)
        backup = None
        previous: bytes | None = None
        if plan.old_text is not None:
            backup = plan.path + BACKUP_SUFFIX
            original = files.read_bytes(plan.path)
            if original is not None:
                try:
                    previous = files.read_bytes(backup)
                except Refused:
                    previous = None
                files.replace(backup, original, like=plan.path)
        try:
            files.replace(plan.path, plan.new_text.encode("utf-8"))
        except OSError:
            if backup is not None:
                _put_back(backup, previous)
            raise
        if plan.environ is not None:
            if plan.created is None:
                install_record.forget(plan.environ, plan.path)
            else:
                install_record.write(plan.environ, plan.path, plan.created)
        return backup

    def runs(self, plan: Plan, executable: str) -> list[str]:
        assert plan.new_text is not None
        parsed = jsontext.parse(plan.new_text, jsonc=self.jsonc)
        document = parsed.root.value if parsed.root is not None else None
        return list(dict.fromkeys(ours.our_commands(document)))

    def also_registered(self, plan: Plan, environ: Mapping[str, str], project: str) -> list[str]:
        return [
            f"Note: {self.title} also runs lich-hook from {other}; every event would run it "
            f"twice. Keep one (lich-hook uninstall {self.key} --scope …, or remove the plugin)."
            for other in discovery.registered_in(self, environ, project)
            if other != plan.path
        ]


@dataclass(frozen=True)
class ModuleHarness(Harness):
    """A harness without command hooks that loads our thin module from a folder.

    Its `locate` names the folder it loads modules from, per scope; ours is
    `file_name` in it.
    """

    template: str = ""  # the file under lich_hooks/modules/
    file_name: str = ""  # the name it is installed as
    module_word: str = "module"  # what the harness calls it: plugin, extension

    ours_noun = "lich-hook's module"

    def path(self, scope: Scope, environ: Mapping[str, str], project: str) -> str:
        return os.path.join(self.locate(scope, environ, project), self.file_name)

    @property
    def shown_as(self) -> str:
        return f"{self.module_word} {self.file_name}, run as the {self.module_word} runs it"

    def shipped_commands(self) -> set[str]:
        command = modules.command_of(modules.template(self))
        return {command} if command else set()

    def plan(
        self, scope: Scope, executable: str | None, environ: Mapping[str, str], project: str
    ) -> Plan:
        path = self.path(scope, environ, project)
        found = modules.read(path)
        if executable is None:
            return self._plan_uninstall(scope, path, found)
        new_text = modules.render(self, executable)
        if found.kind == "other":
            raise Refused(f"{found.why}; nothing was changed")
        if found.kind == "missing":
            return Plan(self, scope, path, WRITE, None, new_text, False)
        assert found.text is not None
        if not modules.is_ours(found.text):
            raise Refused(
                f"{path} exists and was not written by lich-hook (no "
                f"`{modules.MARKER.strip()}` first line); move it aside and run this again; "
                "nothing was changed"
            )
        action = NOTHING if found.text == new_text else WRITE
        return Plan(self, scope, path, action, found.text, new_text, True)

    def _plan_uninstall(self, scope: Scope, path: str, found: modules.Found) -> Plan:
        if found.kind == "missing":
            return Plan(self, scope, path, NOTHING, None, None, False)
        if found.kind == "other" or found.text is None or not modules.is_ours(found.text):
            why = found.why or f"{path} was not written by lich-hook: left as it is"
            return Plan(self, scope, path, NOTHING, found.text, found.text, False, why)
        return Plan(self, scope, path, REMOVE, found.text, None, True)

    def apply(self, plan: Plan, force: bool) -> str | None:
        """Remove or write the file; an older module of ours keeps its owner and mode."""
        if plan.action == REMOVE:
            os.unlink(plan.path)
        else:
            assert plan.new_text is not None
            files.replace(plan.path, plan.new_text.encode("utf-8"))
        return None

    def runs(self, plan: Plan, executable: str) -> list[str]:
        command = modules.command_of(plan.new_text or "")
        return [" ".join([executable, *command.split()[1:]])] if command else []

    def also_registered(self, plan: Plan, environ: Mapping[str, str], project: str) -> list[str]:
        found = []
        for other in SCOPES:
            path = self.path(other, environ, project)
            if other == plan.scope or same_file(path, plan.path):
                continue
            text = modules.read(path).text
            if text is not None and modules.is_ours(text):
                found.append(
                    f"Note: {self.title} also loads lich-hook's module from {path}; every "
                    f"report would be sent twice. Keep one (lich-hook uninstall {self.key} "
                    f"--scope {other})."
                )
        return found


def _put_back(backup: str, previous: bytes | None) -> None:
    """The backup as it was before this write: removed, or its old bytes (best-effort)."""
    try:
        if previous is None:
            os.unlink(backup)
        else:
            files.replace(backup, previous)
    except OSError:
        pass


def read_text(path: str) -> str | None:
    """The file's text, None when it does not exist; Refused when it cannot be read
    (a FIFO or device, too large, unreadable: files.py)."""
    data = files.read_bytes(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{path} is not UTF-8 text; nothing was changed") from None
