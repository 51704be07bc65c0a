"""The three floors (docs/architecture.md): base/ imports nothing above it, hook/ never
imports human/, no import cycle anywhere; and the human commands sit on top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


def _command_of(module: str) -> str:
    """The command a module of commands/ belongs to: doctor/check.py is doctor's."""
    return module.split(".")[3]


def test_one_command_does_not_import_another() -> None:
    """install does not reach into doctor: what both need lives in lich_hooks/human/settings/."""
    for path in (PACKAGE / "human" / "commands").rglob("*.py"):
        name = _module_name(path)
        if name == "lich_hooks.human.commands" or _command_of(name) in SHARED:
            continue
        siblings = {
            n
            for n in _imports(path)
            if n.startswith("lich_hooks.human.commands.")
            and _command_of(n) not in SHARED
            and _command_of(n) != _command_of(name)
        }
        assert siblings == set(), (path.name, siblings)


def _module_name(path: Path) -> str:
    parts = ["lich_hooks", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_imports(path: Path, known: set[str], text: str | None = None) -> set[str]:
    """Every package module `path` imports, wherever the import stands: at the top, in
    a function (a later import is a cycle too, merely a later one) and under
    `if TYPE_CHECKING:` (a circle the type checker walks is one a reader walks)."""
    package = _module_name(path)
    package = package if path.name == "__init__.py" else package.rsplit(".", 1)[0]
    found: set[str] = set()
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import mod` imports pkg.mod; `from pkg import name` pkg itself
            # (a parent package's implicit import is not an edge: it runs first anyway).
            subs = [f"{base}.{alias.name}" for alias in node.names]
            names = [sub for sub in subs if sub in known]
            if len(names) < len(subs):
                names.append(base)
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found.update(name for name in names if name in known)
    return found


PATHS = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
GRAPH = {name: _package_imports(path, set(PATHS)) - {name} for name, path in PATHS.items()}


def _floor(module: str) -> str:
    """base, hook or human; anything else (cli, __main__, plugin/, the package) stands on top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS else "top"


FLOORS = ("base", "hook", "human")
# What each floor may import: never a floor above it.
ALLOWED = {"base": {"base"}, "hook": {"base", "hook"}, "human": {"base", "hook", "human"}}


def _floor_modules(floor: str) -> list[str]:
    return sorted(name for name in GRAPH if _floor(name) == floor)


def _above(module: str) -> list[str]:
    floor = _floor(module)
    return sorted(
        target
        for target in GRAPH[module]
        if target != "lich_hooks" and _floor(target) not in ALLOWED[floor]
    )


def test_the_floors_are_the_folders() -> None:
    assert {_floor(name) for name in GRAPH} == {*FLOORS, "top"}
    assert _floor("lich_hooks.cli") == _floor("lich_hooks.plugin.boot") == "top"


@pytest.mark.parametrize("module", _floor_modules("base"))
def test_base_imports_nothing_above_it(module: str) -> None:
    """base/ is what both worlds read: the standard library and itself."""
    assert _above(module) == []


@pytest.mark.parametrize("module", _floor_modules("hook"))
def test_the_hook_floor_never_imports_the_human_floor(module: str) -> None:
    assert _above(module) == []


def test_the_layout_test_sees_an_upward_import() -> None:
    """The rule can fail: a lazy import under TYPE_CHECKING, inside a function, counts."""
    module = PACKAGE / "hook" / "probe.py"
    text = (
        "TYPE_CHECKING = False\n"
        "def f():\n"
        "    if TYPE_CHECKING:\n"
        "        from lich_hooks.human.settings import ours\n"
    )
    found = _package_imports(module, set(PATHS), text)
    assert found == {"lich_hooks.human.settings.ours"}


def test_no_import_cycle_in_the_package() -> None:
    """No module imports one that imports it back, directly or around a loop, counting
    every import: under TYPE_CHECKING and inside functions too."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(GRAPH[name]):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)
