"""The harness registry (lich_hooks/human/settings/registry.py) is the one list of harnesses.

Adding a harness is one entry there (and its route on the hook side, which the
hot path reads without importing the registry): these tests fail when a
provider that has a registration is missing from either table, when a list a
person sees is not the registry's, or when one harness's text falls through to
another's.
"""

from __future__ import annotations

import ast
import shlex
from pathlib import Path

import pytest

from lich_hooks.base import harnesses as harness
from lich_hooks.human.commands import HARNESS_CHOICE
from lich_hooks.human.settings import ours, registrations
from lich_hooks.human.settings.registry import HARNESSES, MODULES, SETTINGS
from lich_hooks.human.settings.scenarios import Demo

EXE = "/opt/lich-hooks/bin/lich-hook"


def _shipped_providers() -> set[str]:
    """Every provider some registration this package ships runs `lich-hook … <provider>` for."""
    found = set()
    for value in registrations.files().values():
        for command in ours.our_commands(value):
            provider = ours.provider(command)
            assert provider is not None
            found.add(provider)
    return found


def test_every_provider_with_a_registration_has_an_entry() -> None:
    assert _shipped_providers() <= set(HARNESSES)


@pytest.mark.parametrize("key", list(HARNESSES))
def test_every_entry_ships_a_registration_that_runs_it(key: str) -> None:
    commands = HARNESSES[key].shipped_commands()
    assert commands
    for command in commands:
        assert ours.provider(command) == key


@pytest.mark.parametrize("key", list(HARNESSES))
def test_every_entry_has_its_route_on_the_hook_side(key: str) -> None:
    assert key in harness.ROUTES
    for command in HARNESSES[key].shipped_commands():
        event = harness.fold_event((ours.command_argv(command) or shlex.split(command))[1])
        assert event is not None and harness.route(key, event) is not None, command


def test_the_kinds_split_the_registry() -> None:
    assert {**SETTINGS, **MODULES} == HARNESSES
    assert not set(SETTINGS) & set(MODULES)


@pytest.mark.parametrize("key", list(HARNESSES))
def test_next_steps_are_the_harness_s_own(key: str) -> None:
    """install.next_steps once fell through to Antigravity's text for any other harness."""
    entry = HARNESSES[key]
    for scope in ("user", "project"):
        text = "\n".join(entry.next_steps(scope, EXE))
        assert entry.title in text
        others = [h.title for h in HARNESSES.values() if h.title != entry.title]
        assert [title for title in others if title in text] == []


@pytest.mark.parametrize("key", list(HARNESSES))
def test_demo_runs_only_what_the_shipped_registration_runs(key: str, tmp_path: object) -> None:
    entry = HARNESSES[key]
    scenarios = entry.scenarios(Demo(str(tmp_path), "/nonexistent/lich"))
    assert scenarios
    for scenario in scenarios:
        assert entry.command(scenario.event) in entry.shipped_commands()


def test_install_s_choices_are_the_registry() -> None:
    assert list(HARNESS_CHOICE.choices) == list(HARNESSES)


TABLES = ("base/harnesses.py", "human/settings/registry.py")


def _branches_on_a_provider(tree: ast.AST) -> list[int]:
    """Lines comparing with a provider id, matching a `case` against one, or keying a dict
    literal (or a mapping pattern) by one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.MatchValue):  # `case "claude":`, and each side of `"a" | "b"`
            operands = [node.value]
        elif isinstance(node, ast.MatchMapping):
            operands = list(node.keys)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            operands += [
                e
                for n in node.comparators
                if isinstance(n, ast.Tuple | ast.List | ast.Set)
                for e in n.elts
            ]
        elif isinstance(node, ast.Dict):
            operands = [key for key in node.keys if key is not None]
        else:
            continue
        if any(isinstance(n, ast.Constant) and n.value in harness.ROUTES for n in operands):
            found.append(node.lineno)
    return found


def test_harness_facts_live_in_the_tables() -> None:
    """No `if provider == "codex"` and no per-harness dict outside the two tables: a new
    harness is its table entries, and nothing else branches on its id (docs/architecture.md)."""
    package = Path(harness.__file__).resolve().parents[1]
    found = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        lines = _branches_on_a_provider(ast.parse(path.read_text(encoding="utf-8")))
        if lines and relative not in TABLES:
            found[relative] = lines
    assert found == {}


def test_the_facts_check_finds_a_branch() -> None:
    assert _branches_on_a_provider(ast.parse('if key == "claude": pass')) == [1]
    assert _branches_on_a_provider(ast.parse('x = {"codex": 1}')) == [1]
    assert _branches_on_a_provider(ast.parse('y = key in ("a", "crush")')) == [1]
    assert _branches_on_a_provider(ast.parse('z = SETTINGS["claude"]')) == []


@pytest.mark.parametrize(
    "case",
    ['case "claude":', 'case "a" | "codex":', 'case ("x", "crush"):', 'case {"omp": _}:'],
)
def test_the_facts_check_finds_a_match_case(case: str) -> None:
    source = f"match provider:\n    {case}\n        pass\n"
    assert _branches_on_a_provider(ast.parse(source)) == [2]
