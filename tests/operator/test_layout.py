"""The three floors (docs/architecture.md): base/ imports nothing above it, hook/ never
imports human/, no import cycle anywhere; and the human commands sit on top."""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
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
SHARED = ("environment",)


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
    `if TYPE_CHECKING:` (a circle the type checker walks is one a reader walks); and
    every one it reaches by name (_dynamic): a computed name is `COMPUTED`."""
    package = _module_name(path)
    package = package if path.name == "__init__.py" else package.rsplit(".", 1)[0]
    source = path.read_text(encoding="utf-8") if text is None else text
    return _imports_in(ast.parse(source), package, known)


# A dynamic import whose name is not a literal: it could reach any floor.
COMPUTED = "<a computed name>"
_IMPORTERS = {"import_module", "__import__", "run_module"}  # importlib's, the builtin, runpy's
_RUNS_CODE = {"exec", "eval", "compile"}
_DASH_M = re.compile(r"(?:^|\s)-m\s*([A-Za-z_][\w.]*)")


def _imports_in(tree: ast.AST, package: str, known: set[str]) -> set[str]:
    found: set[str] = set()
    aliases = _aliases(tree)
    for node in ast.walk(tree):
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
        else:
            found.update(_dynamic(node, package, known, aliases))
        found.update(name for name in names if name in known)
    return found


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _reached(name: str | None, package: str, known: set[str], run: bool = False) -> set[str]:
    """The package module a name reaches (its longest known prefix; a package run with
    -m runs its __main__), or COMPUTED; names outside the package reach nothing."""
    if name is None:
        return {COMPUTED}
    if name.startswith("."):
        name = importlib.util.resolve_name(name, package)
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in known:
            main = f"{prefix}.__main__"
            return {main} if run and end == len(parts) and main in known else {prefix}
    return set()


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Other names for an importer or exec: `from importlib import import_module as m`,
    `m = importlib.import_module`."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.update({a.asname: a.name for a in node.names if a.asname})
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name | ast.Attribute):
            value = node.value
            named = value.attr if isinstance(value, ast.Attribute) else value.id
            found.update({t.id: named for t in node.targets if isinstance(t, ast.Name)})
    return {alias: name for alias, name in found.items() if name in _IMPORTERS | _RUNS_CODE}


def _dynamic(node: ast.AST, package: str, known: set[str], aliases: dict[str, str]) -> set[str]:
    """What `node` reaches by name: importlib.import_module, __import__, runpy, exec/eval/
    compile of source, a sys.modules lookup, and `-m <module>` in a command it runs."""
    if isinstance(node, ast.List | ast.Tuple):  # an argv: [sys.executable, "-m", name, ...]
        return {
            reached
            for flag, name in itertools.pairwise(node.elts)
            if _literal(flag) == "-m"
            for reached in _reached(_literal(name), package, known, run=True)
        }
    if isinstance(node, ast.Subscript) and _is_sys_modules(node.value):
        return _reached(_literal(node.slice), package, known)
    if not isinstance(node, ast.Call):
        return set()
    func = node.func
    owner = func.value if isinstance(func, ast.Attribute) else None
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    called = aliases.get(called, called)
    first = _literal(node.args[0]) if node.args else None
    if called in _IMPORTERS:
        anchor = next((_literal(k.value) for k in node.keywords if k.arg == "package"), None)
        if called == "import_module" and len(node.args) > 1:
            anchor = _literal(node.args[1])
        return _reached(first, anchor or package, known, run=called == "run_module")
    if called in _RUNS_CODE and (isinstance(func, ast.Name) or _is_name(owner, "builtins")):
        return {COMPUTED} if first is None else _imports_in(ast.parse(first), package, known)
    if called == "get" and _is_sys_modules(owner):
        return _reached(first, package, known)
    commands = [text for text in map(_literal, node.args) if text and "-m" in text]
    return {  # a command line run through a shell: "python3 -m lich_hooks …"
        reached
        for text in commands
        for match in _DASH_M.finditer(text)
        for reached in _reached(match.group(1), package, known, run=True)
    }


def _is_name(node: ast.AST | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_sys_modules(node: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Attribute) and node.attr == "modules" and _is_name(node.value, "sys")
    )


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


@pytest.mark.parametrize("module", _floor_modules("human"))
def test_the_human_floor_never_reaches_the_entry_points(module: str) -> None:
    """cli.py and __main__ dispatch to the commands: a floor that ran them (`-m lich_hooks`)
    would stand on them."""
    assert _above(module) == []


OURS = "lich_hooks.human.settings.ours"
DODGES = {
    "importlib": f"import importlib\ndef f():\n    importlib.import_module('{OURS}')\n",
    "import_module": "from importlib import import_module as m\nm('.ours', 'lich_hooks.human')",
    "alias": f"import importlib\nload = importlib.import_module\nload('{OURS}')",
    "__import__": f"__import__('{OURS}', fromlist=['x'])",
    "exec": "exec('from lich_hooks.human.settings import ours')",
    "builtins.exec": "import builtins\nbuiltins.exec('from lich_hooks.human import settings')",
    "eval": f"eval(\"__import__('{OURS}')\")",
    "sys.modules[]": f"import sys\nsys.modules['{OURS}'].x()",
    "sys.modules.get": f"import sys\nsys.modules.get('{OURS}.write')",
    "runpy": "import runpy\nrunpy.run_module('lich_hooks')",
    "-m argv": "import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'lich_hooks', 'x'])",
    "-m shell": "import os\nos.system('python3 -I -m lich_hooks.human.commands.doctor')",
    "computed import": "import importlib\nimportlib.import_module(NAME)",
    "computed exec": "exec(source)",
    "computed -m": "import subprocess\nsubprocess.run(['python3', '-m', name])",
}


@pytest.mark.parametrize("dodge", DODGES)
def test_the_layout_test_sees_an_import_by_name(dodge: str) -> None:
    """A hook module reaching the human floor or the entry points by name, not by import."""
    found = _package_imports(PACKAGE / "hook" / "probe.py", set(PATHS), DODGES[dodge])
    assert found and all(_floor(name) not in ALLOWED["hook"] for name in found), found


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
        for target in sorted(GRAPH[name] & GRAPH.keys()):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)


# The hook floor's folders, each importing only those after it: a job asks who the card is
# (shared/), and both keep records (state/); a record never asks a job or an attribution.
HOOK_FOLDERS = ("jobs", "shared", "state")


def _hook_part(module: str) -> str | None:
    """The part of hook/ a module belongs to: its folder, or its own name for a module at
    hook/'s top (run, outcome, claim, …); None outside hook/ and for hook/__init__."""
    parts = module.split(".")
    return parts[2] if _floor(module) == "hook" and len(parts) > 2 else None


def _hook_part_edges() -> set[tuple[str, str]]:
    return {
        (source, target)
        for module, imported in GRAPH.items()
        for name in imported
        if (source := _hook_part(module)) is not None
        and (target := _hook_part(name)) is not None
        and source != target
    }


def test_the_hook_folders_are_the_ordered_ones() -> None:
    """A new folder under hook/ takes its place in HOOK_FOLDERS."""
    folders = {path.parent.name for path in (PACKAGE / "hook").glob("*/__init__.py")}
    assert folders == set(HOOK_FOLDERS)


@pytest.mark.parametrize("folder", HOOK_FOLDERS)
def test_a_hook_folder_imports_only_the_folders_after_it(folder: str) -> None:
    """jobs/ → shared/ → state/, never back: a record module imported from shared/ lives in
    state/, not among the jobs."""
    earlier = HOOK_FOLDERS[: HOOK_FOLDERS.index(folder)]
    assert sorted({t for s, t in _hook_part_edges() if s == folder and t in earlier}) == []


def test_the_hook_floor_s_parts_import_in_one_direction() -> None:
    """Counting each folder of hook/ as one part, and each module at its top as one: no loop."""
    edges = _hook_part_edges()
    left = {part for edge in edges for part in edge}
    while left:  # peel off the parts that import none of the rest; a loop never peels
        free = {p for p in left if not any(s == p and t in left for s, t in edges)}
        assert free, f"a loop among (or above) {sorted(left)}"
        left -= free
