"""The fake Codex daemon every test here runs hooks under (fake_codex.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.codex_daemon.fake_codex import FakeCodex


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeCodex]:
    codex = FakeCodex(tmp_path / "fake")
    try:
        yield codex
    finally:
        codex.close()
