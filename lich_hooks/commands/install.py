"""`lich-hook install <harness>` / `uninstall <harness>` (docs/install.md).

Merges our registration into the harness's own settings file so that its
entries run this installation by absolute path, and takes them out again.
The contract with the user's file:

- entries are ours by their command (settings/ours.py); an upgrade replaces
  ours in place, a re-run writes nothing;
- everyone else's entries, events and keys keep their meaning, and their bytes
  wherever our edit does not pass through them (settings/jsontext.py);
- a file that does not parse, or has a shape we do not understand, is refused
  and left untouched;
- before a write the old file is copied next to it (`<name>.lich-hook.bak`), and
  the new one replaces it atomically with the old file's owner, group and
  mode; a symlinked settings file (dotfile managers) is written through the
  link; a FIFO or device is refused, and so is a file its owner made
  read-only unless --force (lich_hooks/settings/files.py).
"""

from __future__ import annotations

import difflib
import json
import os

from lich_hooks.commands.exit_codes import ExitCode
from lich_hooks.commands.style import paint
from lich_hooks.module_harnesses import MODULES
from lich_hooks.settings import discovery, install_record, jsontext, ours
from lich_hooks.settings import files as settings_io
from lich_hooks.settings.harnesses import HARNESSES, Harness
from lich_hooks.settings.ours import Refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lich_hooks.commands.environment import Environment

BACKUP_SUFFIX = ".lich-hook.bak"


class Plan:
    """What an install or uninstall would do to one file, before anything is written."""

    def __init__(
        self,
        harness: Harness,
        scope: str,
        path: str,
        old_text: str | None,
        new_text: str,
        had_ours: bool,
    ) -> None:
        self.harness = harness
        self.scope = scope
        self.path = path
        self.old_text = old_text
        self.new_text = new_text
        self.had_ours = had_ours
        # Containers install created in this file (install_record.py), to note
        # once the write succeeded; None: the record is dropped (uninstall).
        self.created: set[tuple[str, ...]] | None = None

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        old = (self.old_text or "").splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        label = self.path if self.old_text is not None else "/dev/null"
        lines = difflib.unified_diff(old, new, fromfile=label, tofile=self.path)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def read_text(path: str) -> str | None:
    """The file's text, None when it does not exist; Refused when it cannot be read
    (a FIFO or device, too large, unreadable: lich_hooks/settings/files.py)."""
    data = settings_io.read_bytes(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(f"{path} is not UTF-8 text; nothing was changed") from None


def plan(
    harness: Harness,
    scope: str,
    executable: str | None,
    environ: Mapping[str, str],
    project: str,
) -> Plan:
    """Compute the new file for installing `executable` (None: uninstall)."""
    path = os.path.realpath(harness.path(scope, environ, project))
    old_text = read_text(path)
    parsed = None
    document: object = None
    if old_text is not None:
        try:
            parsed = jsontext.parse(old_text, jsonc=harness.jsonc)
        except jsontext.JsonTextError as error:
            raise Refused(
                f"{path} does not parse ({error}); nothing was changed. "
                "Fix the file (or move it aside) and run this again."
            ) from None
        document = parsed.root.value if parsed.root is not None else None
    had_ours = bool(ours.our_commands(document))
    if executable is None and not had_ours:
        return Plan(harness, scope, path, old_text, old_text or "", False)
    new_document: object
    try:
        new_document = ours.merge(harness, document, executable)
    except Refused as error:
        raise Refused(f"{path}: {error}; nothing was changed") from None
    made = install_record.read(environ, path)
    if executable is None:
        # What install found comes back: the containers it did not create stay.
        lost = set(install_record.containers(document)) - set(
            install_record.containers(new_document)
        )
        if made is not None:
            new_document = install_record.restore(new_document, document, lost - made)
    created = (made or set()) | install_record.created(document, new_document)
    if parsed is not None and parsed.root is not None:
        if jsontext.same(parsed.root.value, new_document):
            return Plan(harness, scope, path, old_text, old_text or "", had_ours)
        try:
            new_text = jsontext.edit(parsed, new_document, jsonc=harness.jsonc)
        except jsontext.JsonTextError as error:
            if executable is not None or made is not None:
                raise Refused(f"{path}: {error}; nothing was changed") from None
            # No record, and a comment on a container that removing ours
            # would delete: a person wrote there, so it stays (the outermost
            # first: an event list inside a kept "hooks" may still go).
            new_text = _keeping_containers(parsed, document, new_document, lost, harness, path)
    else:
        new_text = jsontext.dumps(new_document) + "\n"
    result = Plan(harness, scope, path, old_text, new_text, had_ours)
    result.created = None if executable is None else created
    return result


def _keeping_containers(
    parsed: jsontext.Parsed,
    document: object,
    new_document: object,
    lost: set[tuple[str, ...]],
    harness: Harness,
    path: str,
) -> str:
    for depth in (1, 2):
        kept = {where for where in lost if len(where) <= depth}
        restored = install_record.restore(new_document, document, kept)
        try:
            return jsontext.edit(parsed, restored, jsonc=harness.jsonc)
        except jsontext.JsonTextError as error:
            failure = error
    raise Refused(f"{path}: {failure}; nothing was changed")


def apply(plan: Plan, environ: Mapping[str, str]) -> str | None:
    """Write the plan: backup first, then the new file. Returns the backup's path.

    Both keep the settings file's owner, group and mode (settings_io.replace).
    A write that fails leaves the backup as it was before (none, or the
    previous one), so a refused install leaves no trace; OSError says why.
    """
    backup = None
    previous: bytes | None = None
    if plan.old_text is not None:
        backup = plan.path + BACKUP_SUFFIX
        original = settings_io.read_bytes(plan.path)
        if original is not None:
            try:
                previous = settings_io.read_bytes(backup)
            except Refused:
                previous = None
            settings_io.replace(backup, original, like=plan.path)
    try:
        settings_io.replace(plan.path, plan.new_text.encode("utf-8"))
    except OSError:
        if backup is not None:
            _put_back(backup, previous)
        raise
    if plan.created is None:
        install_record.forget(environ, plan.path)
    else:
        install_record.write(environ, plan.path, plan.created)
    return backup


def _put_back(backup: str, previous: bytes | None) -> None:
    """The backup as it was before this write: removed, or its old bytes (best-effort)."""
    try:
        if previous is None:
            os.unlink(backup)
        else:
            settings_io.replace(backup, previous)
    except OSError:
        pass


def next_steps(harness: Harness, scope: str, executable: str) -> list[str]:
    exe = ours.quote(executable)
    if harness.key == "claude":
        # json.dumps: the lines are pasted into settings.json, and a quoted path has quotes.
        status = json.dumps(
            {"type": "command", "command": f"{exe} status-line"}, ensure_ascii=False
        )
        wrapped = json.dumps(f"{exe} status-line -- <your command>", ensure_ascii=False)
        return [
            "Next: start a new Claude Code session (or review them with /hooks).",
            "To show lich workers in the status line, add to the same file:",
            f'  "statusLine": {status}',
            f"  (with a status line command already there: {wrapped})",
        ]
    if harness.key == "codex":
        steps = [
            "Next: Codex runs new or changed hooks only once you trust them: start codex and "
            'choose "Trust all and continue" when it shows "Hooks need review" (or run /hooks).',
            "Until then Codex skips them without a word; `lich-hook doctor` tells you which.",
        ]
        if scope == "project":
            steps.append("Project hooks load only when Codex trusts this project's .codex folder.")
        return steps
    if harness.key == "crush":
        return ["Next: restart Crush; the first tool call of each session reports it to lich."]
    return [
        "Next: restart Antigravity (agy); its first model call in a lich card reports it.",
        "Antigravity ignores a hooks.json it cannot parse as a whole: keep it strict JSON.",
    ]


def run(
    environment: Environment,
    harness_key: str,
    scope: str = "user",
    dry_run: bool = False,
    uninstall: bool = False,
    force: bool = False,
) -> ExitCode:
    """OK: done (or nothing to do); PROBLEM_FOUND: refused (said on stderr).

    `force`: write a settings file its owner made read-only.
    """
    out, env, where, color = (
        environment.out,
        environment.environ,
        environment.cwd,
        environment.colour,
    )
    verb = "uninstall" if uninstall else "install"
    if harness_key in MODULES:  # opencode, omp: a module file, not a settings entry
        from lich_hooks.commands import install_modules

        try:
            exe = None if uninstall else ours.this_executable()
        except Refused as error:
            _error(environment, f"lich-hook: {verb} refused: {error}")
            return ExitCode.PROBLEM_FOUND
        return install_modules.install(environment, harness_key, scope, dry_run, uninstall, exe)
    harness = HARNESSES[harness_key]
    try:
        executable = None if uninstall else ours.this_executable()
        result = plan(harness, scope, executable, env, where)
    except Refused as error:
        _error(environment, f"lich-hook: {verb} refused: {error}")
        return ExitCode.PROBLEM_FOUND
    label = f"{harness.title} ({scope} scope)"
    if uninstall and not result.had_ours:
        out(f"No lich-hook entries for {label} in {result.path}: nothing to remove.")
        return ExitCode.OK
    if not result.changed:
        out(f"Already installed for {label} in {result.path}: nothing written.")
        return ExitCode.OK
    if dry_run:
        out(_colour_diff(result.diff(), color).rstrip("\n"))
        out(paint(f"(dry run: {result.path} was not changed)", "dim", color))
        return ExitCode.OK
    try:
        settings_io.check_writable(result.path, force)
    except Refused as error:
        _error(environment, f"lich-hook: {verb} refused: {error}")
        return ExitCode.PROBLEM_FOUND
    try:
        backup = apply(result, env)
    except OSError as error:
        _error(environment, f"lich-hook: {verb} failed: cannot write {result.path}: {error}")
        return ExitCode.PROBLEM_FOUND
    if uninstall:
        out(paint(f"Removed lich-hook from {label}: {result.path}", "green", color))
    else:
        action = "Updated" if result.had_ours else "Installed"
        out(paint(f"{action} lich-hook for {label}: {result.path}", "green", color))
        assert executable is not None
        for command in dict.fromkeys(ours.our_commands(_document(result))):
            out(f"  runs: {command}")
    if backup:
        out(f"  backup of the previous file: {backup}")
    if not uninstall:
        assert executable is not None
        for line in next_steps(harness, scope, executable):
            out(line)
        _warn_duplicates(harness, result.path, env, where, out, color)
    return ExitCode.OK


def _error(environment: Environment, text: str) -> None:
    """One line on stderr, so `install --dry-run > change.diff` cannot swallow it."""
    environment.err(paint(text, "red", environment.stderr_colour))


def _warn_duplicates(
    harness: Harness,
    path: str,
    environ: Mapping[str, str],
    project: str,
    out: Callable[[str], None],
    color: bool,
) -> None:
    """Two registrations run every event twice (two reports, two agent cards): say so."""
    for other in discovery.registered_in(harness.key, environ, project):
        if other != path:
            out(
                paint(
                    f"Note: {harness.title} also runs lich-hook from {other}; every event "
                    "would run it twice. Keep one (lich-hook uninstall "
                    f"{harness.key} --scope …, or remove the plugin).",
                    "yellow",
                    color,
                )
            )


def _document(result: Plan) -> object:
    parsed = jsontext.parse(result.new_text, jsonc=result.harness.jsonc)
    return parsed.root.value if parsed.root is not None else None


def _colour_diff(text: str, on: bool) -> str:
    if not on:
        return text
    lines = []
    for line in text.splitlines():
        if line.startswith(("+++", "---")):
            lines.append(paint(line, "bold", on))
        elif line.startswith("+"):
            lines.append(paint(line, "green", on))
        elif line.startswith("-"):
            lines.append(paint(line, "red", on))
        elif line.startswith("@@"):
            lines.append(paint(line, "cyan", on))
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"
