"""The human commands sit on top: nothing below them imports `commands/`."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "lich_hooks"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_module_below_the_commands_imports_them() -> None:
    # cli.py is the entry point that dispatches to them: it stands above, not below.
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(n for n in _imports(path) if "commands" in n)
        for path in PACKAGE.rglob("*.py")
        if "commands" not in path.relative_to(PACKAGE).parts and path.name != "cli.py"
    }
    assert {k: v for k, v in offenders.items() if v} == {}


# What every command shares: how it prints, what it may touch, how it exits.
SHARED = ("style", "environment", "exit_codes")


def _family(module: str) -> str:
    """doctor_<topic>.py (install_<topic>.py) is part of doctor (install), split out of it."""
    prefix = module.split("_", 1)[0]
    return prefix if prefix in ("doctor", "install") else module


def test_one_command_does_not_import_another() -> None:
    """install does not reach into doctor: what both need lives in lich_hooks/settings/."""
    for path in (PACKAGE / "commands").glob("*.py"):
        if path.name == "__init__.py" or path.stem in SHARED:
            continue
        siblings = {
            n
            for n in _imports(path)
            if n.startswith("lich_hooks.commands.")
            and n.split(".")[2] not in SHARED
            and _family(n.split(".")[2]) != _family(path.stem)
        }
        assert siblings == set(), (path.name, siblings)
