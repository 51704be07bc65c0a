"""doctor asks the real Codex for its hooks' trust: a running app-server (the daemon the TUI
shares, here `codex app-server --listen unix://`, which serves the same control socket)
answers `hooks/list` with each hook's `trustStatus`, and doctor reports that, saying so;
with the server stopped it computes the hash from config.toml and says that instead."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.base.codexcontrol import CONTROL
from lich_hooks.human.settings import codex_state
from tests.real_clients.support.clients import Client
from tests.real_clients.support.codex import codex_env, seed_codex_home
from tests.support.runner import LICH_HOOK

pytestmark = pytest.mark.real_client

ASKED = "(Codex's running app-server says so)"
COMPUTED = "(computed: no Codex app-server running to ask)"


class Lab:
    def __init__(self, tmp: Path, codex: Client, home: Path) -> None:
        self.codex = codex
        self.home = home
        self.project = tmp / "project"
        self.project.mkdir()
        seed_codex_home(self.home, "http://127.0.0.1:9", hooks=False)
        self.env = codex_env(tmp, self.home)
        self.hooks = self.home / "hooks.json"

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LICH_HOOK), *args],
            env=self.env,
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def codex_row(self) -> str:
        """doctor's Codex rows, as a person reads them."""
        lines = self.cli("doctor").stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if "Codex user settings" in line)
        return "\n".join(lines[start : start + 4])

    def trust(self, trusted_hash: str) -> None:
        key = f"{self.hooks}:session_start:0:0"
        with (self.home / "config.toml").open("a") as config:
            config.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "{trusted_hash}"\n')

    def our_hash(self) -> str:
        group = json.loads(self.hooks.read_text())["hooks"]["SessionStart"][0]
        return codex_state.trust_hash("SessionStart", group.get("matcher"), group["hooks"][0])


@pytest.fixture
def lab(tmp_path: Path, codex: Client) -> Iterator[Lab]:
    if not codex.at_least("0.171.0"):
        pytest.skip("hooks/list and its trustStatus were measured on Codex 0.171.0")
    # The control socket's path must fit a Unix socket address (107 bytes): pytest's tmp_path
    # under an xdist worker does not, and Codex then serves no control socket at all.
    home = Path(tempfile.mkdtemp(prefix="lcx-", dir="/tmp")) / "h"
    try:
        lab = Lab(tmp_path, codex, home)
        assert lab.cli("install", "codex").returncode == 0
        yield lab
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


def serve(lab: Lab) -> subprocess.Popen[bytes]:
    """A running app-server for this CODEX_HOME, once its control socket answers."""
    server = subprocess.Popen(
        [str(lab.codex.binary), "app-server", "--listen", "unix://"],
        env=lab.env,
        cwd=lab.project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(lab.home / "app-server.log").open("wb"),
        start_new_session=True,
    )
    path = os.path.realpath(lab.home / Path(*CONTROL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(path)
                return server
            except OSError:
                time.sleep(0.2)
    os.killpg(server.pid, signal.SIGKILL)
    said = (lab.home / "app-server.log").read_bytes()[-2000:].decode("utf-8", "replace")
    raise AssertionError(f"no control socket at {path} (exit {server.poll()}): {said}")


def stop(server: subprocess.Popen[bytes]) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


def test_doctor_reports_codex_s_own_trust_and_says_which_it_used(lab: Lab) -> None:
    assert COMPUTED in lab.codex_row()  # nothing running: computed, and said
    server = serve(lab)
    try:
        row = lab.codex_row()
        assert "not trusted yet" in row and ASKED in row, row
        lab.trust("sha256:" + "0" * 64)  # trust recorded for another command
        row = lab.codex_row()
        assert "earlier version of this hook" in row and ASKED in row, row
        (lab.home / "config.toml").write_text(
            (lab.home / "config.toml").read_text().rsplit("\n[hooks.state.", 1)[0] + "\n"
        )
        lab.trust(lab.our_hash())
        row = lab.codex_row()
        assert f"SessionStart codex: trusted {ASKED}" in row, row
    finally:
        stop(server)
    row = lab.codex_row()
    assert f"SessionStart codex: trusted {COMPUTED}" in row, row
