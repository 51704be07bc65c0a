"""Fixtures for the real-client tests: installed CLIs, scripted models, a stand-in `lich`.

Select them with `-m real_client`, leave them out with `-m "not real_client"`.
The CLIs are installed once per version into the ignored `.cache/clients/`
(see support/clients.py); without npm or the registry every test here skips.
Each test runs once per selected version of its harness (`LICH_TEST_MATRIX`,
support/clients.py), its id naming it: `test_x[claude-code-2.1.45]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.real_clients.support import clients
from tests.real_clients.support.claude import claude_env, seed_home
from tests.real_clients.support.fake_lich import FakeLich
from tests.real_clients.support.model_api import ModelAPI

CARD = "card-real-1"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "real_client: drives a real CLI (Claude Code, Codex, opencode, omp; Crush built with Go)",
    )


def _ids(key: str) -> list[str]:
    """One run of every test using this harness per version selected (support/clients.py)."""
    return [f"{key}-{v}" for v in clients.selected(key)]


@pytest.fixture(scope="session", params=clients.selected("claude-code"), ids=_ids("claude-code"))
def claude_code(request: pytest.FixtureRequest) -> clients.Client:
    return clients.claude_code(request.param)


@pytest.fixture(scope="session", params=clients.selected("codex"), ids=_ids("codex"))
def codex(request: pytest.FixtureRequest) -> clients.Client:
    return clients.codex(request.param)


@pytest.fixture(scope="session", params=clients.selected("opencode"), ids=_ids("opencode"))
def opencode(request: pytest.FixtureRequest) -> clients.Client:
    return clients.opencode(request.param)


@pytest.fixture(scope="session", params=clients.selected("omp"), ids=_ids("omp"))
def omp(request: pytest.FixtureRequest) -> clients.OmpClient:
    return clients.omp(request.param)


@pytest.fixture(scope="session")
def crush() -> clients.Client:
    return clients.crush()


@pytest.fixture
def model_api() -> Iterator[ModelAPI]:
    with ModelAPI() as api:
        yield api


@pytest.fixture
def fake_lich(tmp_path: Path) -> FakeLich:
    return FakeLich(tmp_path / "lich-app")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


ClaudeEnv = Callable[..., dict[str, str]]


@pytest.fixture
def claude_setup(
    tmp_path: Path, project: Path, model_api: ModelAPI, lich: StandIn, fake_lich: FakeLich
) -> ClaudeEnv:
    """`claude_setup(depth="0", permission_mode=None, **env)`: seed HOME, return the CLI's env.

    The environment is a lich card's: the stand-in listener's port and token,
    the card id, LICH_BIN pointing at the stand-in `lich`, and the depth lich
    gives a top-level session unless told otherwise.
    """

    def make(
        depth: str | None = "0", permission_mode: str | None = None, **extra: str
    ) -> dict[str, str]:
        home = tmp_path / "home"
        seed_home(home, project, permission_mode)
        lich_vars = {**lich.env(CARD), "LICH_BIN": str(fake_lich.path)}
        if depth is not None:
            lich_vars["LICH_SUBAGENT_DEPTH"] = depth
        return claude_env(tmp_path, home, model_api.base_url, **lich_vars, **extra)

    return make
