"""The suite's own rules: every property test chooses its Hypothesis deadline.

The default (200 ms per example) fails a correct test on a loaded 2-core machine
(701 ms seen), so each test says what it wants: None, or a measured generous value.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def _named(call: ast.expr, name: str) -> ast.Call | None:
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name:
        return call
    return None


def _sets_deadline(call: ast.Call | None) -> bool:
    return call is not None and any(k.arg == "deadline" for k in call.keywords)


def undecided(source: str) -> list[str]:
    """The property tests (`@given`, a RuleBasedStateMachine's TestCase) with no deadline."""
    tree = ast.parse(source)
    decided = {  # `Machine.TestCase.settings = settings(..., deadline=...)`
        ast.unparse(node.targets[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _sets_deadline(_named(node.value, "settings"))
    }
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            decorators = node.decorator_list
            if any(_named(d, "given") for d in decorators) and not any(
                _sets_deadline(_named(d, "settings"))
                or (isinstance(d, ast.Name) and d.id in decided)  # `PROPERTY = settings(...)`
                for d in decorators
            ):
                missing.append(f"{node.name} (line {node.lineno})")
        elif isinstance(node, ast.ClassDef) and any(
            ast.unparse(base).endswith("RuleBasedStateMachine") for base in node.bases
        ):
            if f"{node.name}.TestCase.settings" not in decided:
                missing.append(f"{node.name} (line {node.lineno})")
    return missing


def test_every_property_test_chooses_its_deadline() -> None:
    missing = [
        f"{path.relative_to(TESTS)}: {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for name in undecided(path.read_text(encoding="utf-8"))
    ]
    assert missing == [], "set `deadline` (None or a measured value) in settings():\n" + "\n".join(
        missing
    )


def test_the_check_sees_a_property_test_without_a_deadline() -> None:
    planted = (
        "@settings(max_examples=5)\n@given(st.text())\ndef test_a(s): ...\n"
        "@given(st.text())\n@settings(deadline=None)\ndef test_b(s): ...\n"
        "class M(stateful.RuleBasedStateMachine): ...\n"
        "M.TestCase.settings = settings(max_examples=5)\n"
        "class N(RuleBasedStateMachine): ...\n"
        "N.TestCase.settings = settings(deadline=None)\n"
        "LOOSE = settings(max_examples=5)\nTIMED = settings(deadline=None)\n"
        "@LOOSE\n@given(st.text())\ndef test_c(s): ...\n"
        "@TIMED\n@given(st.text())\ndef test_d(s): ...\n"
    )
    assert undecided(planted) == ["test_a (line 3)", "M (line 7)", "test_c (line 15)"]
