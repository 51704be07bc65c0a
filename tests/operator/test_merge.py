"""The merge behind `install`/`uninstall`, as properties over arbitrary settings."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.human.settings import ours
from lich_hooks.human.settings.ours import command_argv, our_commands
from lich_hooks.human.settings.registry import SETTINGS as HARNESSES
from lich_hooks.human.settings.settings_file import SettingsHarness

EXE = "/opt/lich hooks/bin/lich-hook"


def merge(harness: SettingsHarness, document: object, executable: str | None) -> dict[str, object]:
    return harness.merged(document, executable)


# a space: the command must quote it
EVENTS = ["SessionStart", "Stop", "PreToolUse", "PostToolUse"]
MATCHERS = [None, "Bash", "Agent|Task|TaskStop", ""]

foreign_handler = st.builds(
    lambda cmd, timeout: {"type": "command", "command": cmd, **({"timeout": timeout} or {})},
    st.sampled_from(["audit.sh", "echo lich-hook", "say done", "lich-hooks-report", "x"]),
    st.integers(1, 60),
)
old_ours = st.builds(
    lambda exe, event: {"type": "command", "command": f"{exe} {event} claude"},
    st.sampled_from(["lich-hook", "/old/venv/bin/lich-hook", "'/a b/lich-hook'"]),
    st.sampled_from(EVENTS),
)
handler = st.one_of(foreign_handler, foreign_handler, old_ours)


def group(matcher: str | None, handlers: list[dict[str, object]]) -> dict[str, object]:
    return ({"matcher": matcher} if matcher is not None else {}) | {"hooks": handlers}


claude_like = st.fixed_dictionaries(
    {
        "hooks": st.dictionaries(
            st.sampled_from(EVENTS),
            st.lists(
                st.builds(
                    group, st.sampled_from(MATCHERS), st.lists(handler, min_size=1, max_size=3)
                ),
                max_size=3,
            ),
            max_size=4,
        )
    },
    optional={"model": st.just("opus"), "env": st.just({"A": "1"})},
)


def foreign(document: object) -> Counter[tuple[str, str, str]]:
    """Every handler that is not ours, with the event and matcher it runs under."""
    found: Counter[tuple[str, str, str]] = Counter()
    assert isinstance(document, dict)
    hooks = document.get("hooks", {})
    assert isinstance(hooks, dict)
    for event, groups in hooks.items():
        for entry in groups:
            for item in entry["hooks"]:
                if not ours.is_ours(item):
                    found[(event, str(entry.get("matcher")), repr(sorted(item.items())))] += 1
    return found


def pruned(document: dict[str, object]) -> dict[str, object]:
    """Without empty event lists and an empty `hooks`: what uninstall may tidy away."""
    hooks = document.get("hooks")
    result = {k: v for k, v in document.items() if k != "hooks"}
    if isinstance(hooks, dict):
        kept = {event: groups for event, groups in hooks.items() if groups}
        if kept:
            result["hooks"] = kept
    return result


@pytest.mark.slow
@given(claude_like)
@settings(max_examples=300, deadline=None)
def test_claude_install_upgrade_uninstall(document: dict[str, object]) -> None:
    harness = HARNESSES["claude"]
    installed = merge(harness, document, EXE)
    want = harness.desired(EXE)
    assert sorted(our_commands(installed)) == sorted(our_commands(want))
    assert all(command_argv(c)[0] == EXE for c in our_commands(installed))  # type: ignore[index]
    assert foreign(installed) == foreign(document)
    assert merge(harness, installed, EXE) == installed  # a re-run changes nothing
    removed = merge(harness, installed, None)
    assert our_commands(removed) == []
    assert foreign(removed) == foreign(document)
    # Uninstalling never depends on having installed (up to events left empty).
    assert pruned(merge(harness, document, None)) == pruned(removed)
    for key in ("model", "env"):
        assert removed.get(key) == document.get(key)


crush_like = st.fixed_dictionaries(
    {
        "hooks": st.fixed_dictionaries(
            {
                "PreToolUse": st.lists(
                    st.one_of(
                        st.builds(
                            lambda m, c: {"matcher": m, "command": c},
                            st.sampled_from(["^bash$", "."]),
                            st.sampled_from(["guard.sh", "log"]),
                        ),
                        st.builds(
                            lambda c: {"command": c, "timeout": 9},
                            st.sampled_from(
                                ["lich-hook PreToolUse crush", "/v/bin/lich-hook PreToolUse crush"]
                            ),
                        ),
                    ),
                    max_size=4,
                )
            }
        )
    },
    optional={"models": st.just({"large": {"model": "m", "provider": "p"}})},
)


@given(crush_like)
@settings(max_examples=200, deadline=None)
def test_crush_flat_entries(document: dict[str, object]) -> None:
    harness = HARNESSES["crush"]
    theirs = [e for e in document["hooks"]["PreToolUse"] if not ours.is_ours(e)]  # type: ignore[index]
    installed = merge(harness, document, EXE)
    entries = installed["hooks"]["PreToolUse"]  # type: ignore[index]
    assert [e for e in entries if not ours.is_ours(e)] == theirs
    assert len(our_commands(installed)) == 1
    assert merge(harness, installed, EXE) == installed
    removed = merge(harness, installed, None)
    assert our_commands(removed) == []
    assert removed.get("models") == document.get("models")


def test_antigravity_keeps_other_named_hooks_in_place() -> None:
    harness = HARNESSES["antigravity"]
    document = {
        "a": {"PreToolUse": [{"matcher": "", "hooks": [{"command": "x"}]}], "enabled": True},
        "lich": {"PreInvocation": []},
        "b": {"Stop": [{"command": "lich-hook Stop antigravity"}], "enabled": False},
    }
    installed = merge(harness, document, EXE)
    assert list(installed) == ["a", "lich", "b"]
    assert installed["a"] == document["a"]
    assert installed["b"] == {"enabled": False}  # our stray handler left; the switch stays
    assert merge(harness, installed, None) == {"a": document["a"], "b": {"enabled": False}}
