"""A harness that loads our module file from a folder (opencode, omp), ours by its first line."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from lich_hooks.base.safefile import same_file
from lich_hooks.human.settings import files, modules
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.kinds import NOTHING, REMOVE, SCOPES, WRITE, Harness, Plan, Scope


@dataclass(frozen=True)
class ModuleHarness(Harness):
    """`locate` names the folder it loads modules from, per scope; ours is `file_name` there."""

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
        command = modules.command_of(modules.template(self.template))
        return {command} if command else set()

    def command(self, event: str) -> str:
        return f"lich-hook {event} {self.key}"  # modules.command_of's spelling

    def plan(
        self, scope: Scope, executable: str | None, environ: Mapping[str, str], project: str
    ) -> Plan:
        path = self.path(scope, environ, project)
        found = modules.read(path)
        if executable is None:
            return self._plan_uninstall(scope, path, found)
        new_text = modules.render(self.template, executable)
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

    def also_loaded(self, plan: Plan, environ: Mapping[str, str], project: str) -> list[str]:
        """A note for each other scope's module of ours (every report would be sent twice)."""
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
