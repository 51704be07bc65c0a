"""The interface every registry entry answers, so install, uninstall, doctor and demo never ask
which kind they hold (settings_file.py or module_file.py; promises: docs/install.md)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from lich_hooks.human.settings.scenarios import Demo, Scenario
from lich_hooks.human.settings.verified import Verified

Scope = Literal["user", "project"]
Action = Literal["write", "remove", "nothing"]
Locate = Callable[[Scope, Mapping[str, str], str], str]  # (scope, environ, project) -> path

SCOPES: tuple[Scope, ...] = ("user", "project")
WRITE: Action = "write"
REMOVE: Action = "remove"
NOTHING: Action = "nothing"


@dataclass(eq=False)  # compared as before: by identity
class Plan:
    """One file's change, decided before any write (`old_text`, `new_text` None: no file)."""

    harness: Harness
    scope: Scope
    path: str
    action: Action
    old_text: str | None
    new_text: str | None
    had_ours: bool
    why: str = ""
    # which containers install created, noted once written (install_record.py); None: forget
    environ: Mapping[str, str] | None = None
    created: set[tuple[str, ...]] | None = None

    def diff(self) -> str:
        old = (self.old_text or "").splitlines(keepends=True)
        new = (self.new_text or "").splitlines(keepends=True)
        before = self.path if self.old_text is not None else "/dev/null"
        after = self.path if self.new_text is not None else "/dev/null"
        lines = difflib.unified_diff(old, new, fromfile=before, tofile=after)
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class Harness:
    """One harness, and what a person is told about it after a write and in demo."""

    key: str
    title: str
    locate: Locate
    next_steps: Callable[[Scope, str], list[str]]
    scenarios: Callable[[Demo], list[Scenario]]
    # The releases the real-client tests ran (verified.py); None: never run, doctor says nothing.
    verified: Verified | None = None
    ours_noun = "lich-hook's entries"  # what a person reads for ours in the file

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

    def command(self, event: str) -> str:
        """The command its registration runs for `event`, as shipped (what demo runs)."""
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
