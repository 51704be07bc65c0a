"""The verified ranges agree in their three places: the data doctor reads (each registry
entry's `verified`, lich_hooks/human/settings/registry.py), the matrix the real-client tests run
(tests/real_clients/support/clients.py) and docs/harnesses.md's Supported versions."""

from __future__ import annotations

import re

from lich_hooks.human.settings.registry import HARNESSES
from lich_hooks.human.settings.verified import version_key
from tests.real_clients.support.clients import MATRIX, REPO

# the matrix names harnesses by npm package family, doctor by the command users run
MATRIX_KEY = {"claude": "claude-code", "codex": "codex", "opencode": "opencode", "omp": "omp"}
VERIFIED = {key: h.verified for key, h in HARNESSES.items() if h.verified is not None}
TITLES = {key: h.title for key, h in HARNESSES.items()}


def _section() -> str:
    text = (REPO / "docs" / "harnesses.md").read_text()
    start = text.index("### Supported versions")
    end = text.index("\n### ", start + 1)
    return text[start:end]


def _rows(table: str) -> list[list[str]]:
    rows = []
    for line in table.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[1:]  # the header


def test_the_verified_range_is_the_matrix_oldest_to_newest() -> None:
    assert set(MATRIX_KEY) == set(VERIFIED)  # a harness in the matrix says its range, and back
    for key, matrix_key in MATRIX_KEY.items():
        pins = [pin.version for pin in MATRIX[matrix_key].pins]
        assert pins == sorted(pins, key=version_key), f"{matrix_key}: pins oldest first"
        assert (VERIFIED[key].oldest, VERIFIED[key].newest) == (pins[0], pins[-1])


def test_the_docs_show_the_same_ranges() -> None:
    ranges_table = _section().split("\n\n| harness | version |")[0]
    shown = {row[0]: row[1] for row in _rows(ranges_table[ranges_table.index("| harness |") :])}
    assert shown == {TITLES[key]: v.range for key, v in VERIFIED.items()}


def test_the_docs_list_every_version_in_the_matrix() -> None:
    section = _section()
    per_version = section[section.index("| harness | version |") :]
    listed: dict[str, list[str]] = {}
    for row in _rows(per_version.split("\n\n")[0]):
        listed.setdefault(row[0], []).append(row[1])
    titles = {TITLES[key]: matrix_key for key, matrix_key in MATRIX_KEY.items()}
    assert set(listed) == set(titles)
    for title, versions in listed.items():
        pins = [pin.version for pin in MATRIX[titles[title]].pins]
        assert [re.sub(r"\D*$", "", v) for v in versions] == pins, title
