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


def _command_of(module: str) -> str:
    """The command a module of commands/ belongs to: doctor/check.py is doctor's."""
    return module.split(".")[2]


def test_one_command_does_not_import_another() -> None:
    """install does not reach into doctor: what both need lives in lich_hooks/human/settings/."""
    for path in (PACKAGE / "commands").rglob("*.py"):
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


def _runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The package modules `path` imports when it runs, at any depth (a function-level
    import is a cycle too, merely a later one); `if TYPE_CHECKING:` blocks never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    package = _module_name(path)
    package = package if path.name == "__init__.py" else package.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
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


def test_no_import_cycle_in_the_package() -> None:
    """No module imports one that imports it back, directly or around a loop."""
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: _runtime_imports(path, set(paths)) - {name} for name, path in paths.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)
