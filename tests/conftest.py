from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.real_clients.support import clients
from tests.support import realhome, runner
from tests.support.runner import LICH_HOOK, base_env

EXPECTS_INTERNAL_ERROR = "expects_internal_error"
# Folders whose tests run on one xdist worker, one after another (`--dist loadgroup`): the
# Windows suite shares one Wine prefix and wineserver, and the real clients share their
# module-scoped daemons and were timed on a machine not running two of them at once.
ONE_WORKER = ("windows", "real_clients")
# Folders whose every test is `slow` (the inner loop leaves them out): the Windows suite builds
# a Wine prefix of 717 MB on first use (~3.5 min) and starts Wine for each run.
SLOW = ("windows",)
# The environment and folder the suite started in, before any test points HOME at its tmp.
STARTED = dict(os.environ)
STARTED_IN = Path.cwd()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{EXPECTS_INTERNAL_ERROR}: the test makes a hook run crash on purpose "
        "(the crash guard lets its `internal-error` through)",
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per harness version run: the matrix's result (docs/harnesses.md quotes it).

    Here, not in real_clients/: under xdist only this conftest is loaded where reports meet.
    """
    versions = {f"{key}-{v}": (key, v) for key in clients.MATRIX for v in clients.selected(key)}
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for outcome in ("passed", "failed", "error", "skipped", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "").removesuffix("@real_clients")  # xdist_group
            if getattr(report, "when", "call") not in ("call", "setup") or "[" not in nodeid:
                continue
            if outcome == "passed" and report.when != "call":
                continue
            params = nodeid.rsplit("[", 1)[1].rstrip("]")
            for id_, run in versions.items():
                if re.search(rf"(^|-){re.escape(id_)}(-|$)", params):
                    tally = counts.setdefault(run, {})
                    tally[outcome] = tally.get(outcome, 0) + 1
    if not counts:
        return
    terminalreporter.section("version matrix")
    for (key, release), tally in sorted(
        counts.items(), key=lambda item: (item[0][0], clients.version_key(item[0][1]))
    ):
        shown = ", ".join(f"{n} {outcome}" for outcome, n in tally.items())
        terminalreporter.write_line(f"{key} {release}: {shown}")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(here):
            continue  # a test the guard's own test plants outside the suite
        folder = item.path.relative_to(here).parts[0]
        if folder in ONE_WORKER:
            item.add_marker(pytest.mark.xdist_group(folder))
        if folder in SLOW:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _no_hidden_crash(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test whose hook run logged `internal-error`, unless it expects one.

    A job that raises still leaves the harness exit 0 and its default stdout,
    which is exactly what many "stays native" / "no verdict" tests assert: without
    this guard a crash would pass them.
    """
    runner.forget_watched()
    yield
    errors = runner.internal_errors()
    runner.forget_watched()
    if errors and request.node.get_closest_marker(EXPECTS_INTERNAL_ERROR) is None:
        pytest.fail("a hook run crashed (internal-error):\n" + "\n".join(errors), pytrace=False)


@pytest.fixture(scope="session")
def _real_home_places() -> tuple[set[Path], set[Path]]:
    return realhome.watched(STARTED, [realhome.REPO, STARTED_IN])


@pytest.fixture(autouse=True)
def _real_home_untouched(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    _real_home_places: tuple[set[Path], set[Path]],
) -> Iterator[None]:
    """Fail the test during which something of ours appeared in, changed in or left the real home.

    Only what our code could write is watched (tests/support/realhome.py), so a harness working
    in its own folders beside the suite fails nothing. Under xdist a write by a test on another
    worker falls in this test's window too: the failure names the tests running beside it.
    """
    # one folder every xdist worker of this run shares (each has its own basetemp below it)
    running = tmp_path_factory.getbasetemp().parent / "running"
    running.mkdir(exist_ok=True)
    me = running / (os.environ.get("PYTEST_XDIST_WORKER") or "main")
    me.write_text(request.node.nodeid)
    before = realhome.snapshot(_real_home_places)
    yield
    after = realhome.snapshot(_real_home_places)
    me.unlink(missing_ok=True)
    changed = realhome.changed(before, after, realhome.real_home(STARTED))
    if changed:
        beside = []
        for other in running.iterdir():
            try:
                beside += [other.read_text()] if other != me else []
            except OSError:
                continue  # that test ended as we looked
        also = f" (running beside it: {', '.join(beside)})" if beside else ""
        pytest.fail(
            f"{request.node.nodeid} left something of ours in the real home: {changed}{also}",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _no_real_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may read or write the real home: point every location at tmp."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for name, value in {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_DATA_HOME": home / ".local" / "share",
        "LICH_HOOK_STATE_DIR": tmp_path / "state",
    }.items():
        monkeypatch.setenv(name, str(value))
    for name in list(os.environ):
        if name.startswith(("LICH_", "CLAUDE_")) and name != "LICH_HOOK_STATE_DIR":
            monkeypatch.delenv(name)


@pytest.fixture(scope="session", autouse=True)
def _console_script_installed() -> None:
    assert LICH_HOOK.exists(), f"install the package first: {LICH_HOOK} missing"


@pytest.fixture
def lich() -> Iterator[StandIn]:
    with StandIn() as standin:
        yield standin


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A harness environment outside lich."""
    return base_env(tmp_path)


@pytest.fixture
def lich_env(tmp_path: Path, lich: StandIn) -> dict[str, str]:
    """A harness environment inside a lich card served by the stand-in."""
    return base_env(tmp_path, **lich.env("card-1"))
