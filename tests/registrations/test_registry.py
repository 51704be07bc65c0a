"""The harness registry (lich_hooks/human/settings/harnesses.py) is the one list of harnesses.

Adding a harness is one entry there (and its route on the hook side, which the
hot path reads without importing the registry): these tests fail when a
provider that has a registration is missing from either table, when a list a
person sees is not the registry's, or when one harness's text falls through to
another's.
"""

from __future__ import annotations

import shlex

import pytest

from lich_hooks.base import harnesses as harness
from lich_hooks.human.commands import HARNESS_CHOICE
from lich_hooks.human.settings import ours, registrations
from lich_hooks.human.settings.harnesses import HARNESSES, MODULES, SETTINGS
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
    assert key in harness.PROVIDERS
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
        assert registrations.command(scenario.event, key) in entry.shipped_commands()


def test_install_s_choices_are_the_registry() -> None:
    assert list(HARNESS_CHOICE.choices) == list(HARNESSES)
