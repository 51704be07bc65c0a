from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import FakeLich
from tests.support.runner import base_env


@pytest.fixture
def fake(tmp_path: Path) -> FakeLich:
    return FakeLich(tmp_path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def card_env(tmp_path: Path, fake: FakeLich) -> dict[str, str]:
    """An interactive Claude Code session in a current lich's top-level card."""
    return base_env(
        tmp_path,
        **fake.env(),
        LICH_SESSION_ID="card-1",
        LICH_SUBAGENT_DEPTH="0",
        CLAUDE_CODE_SESSION_ATTENDED="1",
        CLAUDE_CODE_ENTRYPOINT="cli",
    )
