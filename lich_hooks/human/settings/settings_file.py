"""A harness with command hooks in its own JSON(C) settings file: ours merged in and out by their
command (ours.py), every other byte kept (jsontext.py); promises: docs/install.md."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lich_hooks.human.settings import files, install_record, jsontext, ours, registrations
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.kinds import NOTHING, REMOVE, SCOPES, WRITE, Harness, Plan, Scope

Places = Callable[[Mapping[str, str], str], list[tuple[str, str]]]
Containers = set[tuple[str, ...]]

BACKUP_SUFFIX = ".lich-hook.bak"


@dataclass(frozen=True)
class SettingsHarness(Harness):
    """A harness with command hooks, registered in its own JSON(C) settings file."""

    registration: Callable[[], dict[str, object]] = dict
    # its file at the repository root (registrations.files()); "": demo runs the registration
    shipped_file: str = ""
    # Windows: its shell reads `C:/…` (Git Bash); it runs a `command_windows` beside each command
    slashes: bool = False
    command_windows: bool = False
    jsonc: bool = False  # its settings accept comments and trailing commas
    also_reads: Places | None = None  # (label, path) of the files beside the one per scope
    # a folder of plugin clones, where the harness keeps no plugin records we can read
    plugins: Callable[[Mapping[str, str]], str] | None = None
    # its finder in discovery.py, (walk, this entry); None: its settings files only
    finds: Callable[..., None] | None = None
    off_switch: str | None = None  # a top-level key that, when true, runs no hook at all
    named_hook: str | None = None  # hooks are named objects: ours is the one of this name
    # its command that removes a plugin: {id} the plugin's, {scope} " --scope <s>" or ""
    plugin_remove: str | None = None
    plugin_add: str | None = None  # its commands that add our plugin (the README's)

    def places(self, environ: Mapping[str, str], project: str) -> list[tuple[str, str]]:
        """(label, path) of every settings file this harness reads hooks from."""
        found = [(f"{scope} settings", self.path(scope, environ, project)) for scope in SCOPES]
        return found + (self.also_reads(environ, project) if self.also_reads else [])

    @property
    def shown_as(self) -> str:
        return self.shipped_file or f"the registration install writes for {self.title}"

    def shipped_commands(self) -> set[str]:
        shipped = registrations.files()[self.shipped_file] if self.shipped_file else None
        return set(ours.our_commands(shipped or self.registration()))

    def command(self, event: str) -> str:
        return registrations.command(event, self.key)

    def desired(self, executable: str, where: str | None = None) -> dict[str, object]:
        """Our registration running `executable`; `where`: its file, named by the failure line."""
        windows = sys.platform == "win32"
        program = executable.replace("\\", "/") if windows and self.slashes else executable
        cmd = executable if windows and self.command_windows else None
        value = ours.with_executable(self.registration(), program, where, cmd)
        assert isinstance(value, dict)
        return value

    def merged(
        self, document: object, executable: str | None, where: str | None = None
    ) -> dict[str, object]:
        """The settings document with ours for `executable` in it (None: taken out)."""
        want = self.desired(executable, where) if executable else {}
        return ours.merge(document, want, self.named_hook)

    def plan(
        self, scope: Scope, executable: str | None, environ: Mapping[str, str], project: str
    ) -> Plan:
        path = os.path.realpath(self.path(scope, environ, project))
        old_text, parsed = self._read(path)
        document = _value(parsed)
        had_ours = bool(ours.our_commands(document))
        unchanged = Plan(self, scope, path, NOTHING, old_text, old_text, had_ours)
        if executable is None and not had_ours:
            return unchanged
        made = install_record.read(environ, path)
        new_document, lost = self._change(document, executable, made, path)
        if parsed is not None and parsed.root is not None:
            if jsontext.same(parsed.root.value, new_document):
                return unchanged
        keep_commented = executable is None and made is None
        new_text = self._text(parsed, document, new_document, lost, keep_commented, path)
        action = REMOVE if executable is None else WRITE
        result = Plan(self, scope, path, action, old_text, new_text, had_ours, environ=environ)
        if executable is not None:
            result.created = (made or set()) | install_record.created(document, new_document)
        return result

    def _read(self, path: str) -> tuple[str | None, jsontext.Parsed | None]:
        """The file's text and its parse (None, None: no file); Refused when it cannot be read
        (files.py), is not UTF-8 text or does not parse."""
        data = files.read_bytes(path)
        if data is None:
            return None, None
        try:
            old_text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"{path} is not UTF-8 text; nothing was changed") from None
        try:
            return old_text, jsontext.parse(old_text, jsonc=self.jsonc)
        except jsontext.JsonTextError as error:
            raise Refused(
                f"{path} does not parse ({error}); nothing was changed. "
                "Fix the file (or move it aside) and run this again."
            ) from None

    def _change(
        self, document: object, executable: str | None, made: Containers | None, path: str
    ) -> tuple[object, Containers]:
        """The merged document and, on uninstall, the containers it emptied that the record
        says install did not create (`made` None: no record, decided later)."""
        try:
            new_document: object = self.merged(document, executable, path)
        except Refused as error:
            raise Refused(f"{path}: {error}; nothing was changed") from None
        if executable is not None:
            return new_document, set()
        before = set(install_record.containers(document))
        lost = before - set(install_record.containers(new_document))
        if made is not None:
            new_document = install_record.restore(new_document, document, lost - made)
        return new_document, lost

    def _text(
        self,
        parsed: jsontext.Parsed | None,
        document: object,
        new_document: object,
        lost: Containers,
        keep_commented: bool,
        path: str,
    ) -> str:
        """The new file's text: the old one edited in place, or a new file's. `keep_commented`
        (no record): where a comment sits on a container ours would empty, a person's, the edit
        keeps the containers it would empty, the outermost first, then all."""
        if parsed is None or parsed.root is None:
            return jsontext.dumps(new_document) + "\n"
        tries = [new_document]
        if keep_commented:
            for depth in (1, 2):
                kept = {where for where in lost if len(where) <= depth}
                tries.append(install_record.restore(new_document, document, kept))
        for attempt in tries:
            try:
                return jsontext.edit(parsed, attempt, jsonc=self.jsonc)
            except jsontext.JsonTextError as error:
                failure = error
        raise Refused(f"{path}: {failure}; nothing was changed")

    def apply(self, plan: Plan, force: bool) -> str | None:
        """Backup, then the file, keeping owner and mode; a failed write puts the backup back."""
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
        document = _value(jsontext.parse(plan.new_text, jsonc=self.jsonc))
        return list(dict.fromkeys(ours.our_commands(document)))


def _value(parsed: jsontext.Parsed | None) -> object:
    return parsed.root.value if parsed is not None and parsed.root is not None else None


def _put_back(backup: str, previous: bytes | None) -> None:
    """The backup as it was before this write: removed, or its old bytes (best-effort)."""
    try:
        if previous is None:
            os.unlink(backup)
        else:
            files.replace(backup, previous)
    except OSError:
        pass
