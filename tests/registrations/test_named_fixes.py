"""Every fix we name, run: an `install` entry whose program exists but cannot start (its venv's
Python upgraded away), for a pipx, a uv and a pip install of this checkout. The entry is the
one the installed `lich-hook install claude` writes; its SessionStart line names a fix; the
test runs that very text in a shell and the next session reports, with no line.

pipx and uv come from the package index into a throwaway venv (skipped, with the reason, where
that fails). "Upgraded away": the install's Python is a copy of this one in a folder of its
own, deleted after the install, as a Python upgrade leaves a venv's `bin/python` link.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.support.runner import base_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the interpreter copy is Linux's layout"),
]

REPO = Path(__file__).resolve().parents[2]
INSTALLERS = ["pipx", "uv", "pip"]
NETWORK = r"PIP_|UV_INDEX|SSL_CERT_|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|(?i:.*_proxy$)"


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with pipx and uv from the package index."""
    folder = tmp_path_factory.mktemp("tools")
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    ran = subprocess.run(
        [str(folder / "bin" / "pip"), "install", "-q", "pipx", "uv"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if ran.returncode != 0:
        pytest.skip(f"pipx and uv could not be installed from the index: {ran.stderr[-300:]}")
    return folder / "bin"


def movable_python(folder: Path) -> Path:
    """This Python, runnable from `folder` (the binary copied, its stdlib linked)."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (folder / "bin").mkdir(parents=True)
    (folder / "lib").mkdir()
    binary = folder / "bin" / version
    shutil.copy2(os.path.realpath(sys.executable), binary)
    (folder / "lib" / version).symlink_to(Path(sys.base_prefix) / "lib" / version)
    return binary


def run(argv: list[str], env: dict[str, str], stdin: str = "") -> str:
    ran = subprocess.run(
        argv, env=env, input=stdin, capture_output=True, text=True, timeout=600, check=False
    )
    assert ran.returncode == 0, (argv, ran.stdout[-2000:], ran.stderr[-2000:])
    return ran.stdout


@pytest.mark.parametrize("installer", INSTALLERS)
def test_the_named_reinstall_makes_the_next_session_report(
    installer: str, tools: Path, tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path)
    # the index as this machine reaches it (its certificates, its mirrors)
    env.update({k: v for k, v in os.environ.items() if re.match(NETWORK, k)})
    env.update(
        PATH=f"{tools}:/usr/local/bin:/usr/bin:/bin",
        PIPX_HOME=str(tmp_path / "home" / ".local" / "share" / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "home" / ".local" / "bin"),
        UV_TOOL_DIR=str(tmp_path / "home" / ".local" / "share" / "uv" / "tools"),
        UV_TOOL_BIN_DIR=str(tmp_path / "home" / ".local" / "bin"),
        UV_PYTHON_DOWNLOADS="never",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    python = movable_python(tmp_path / "old-python")
    if installer == "pipx":
        run(["pipx", "install", "--python", str(python), str(REPO)], env)
        program = Path(env["PIPX_BIN_DIR"]) / "lich-hook"
    elif installer == "uv":
        run(["uv", "tool", "install", "--python", str(python), str(REPO)], env)
        program = Path(env["UV_TOOL_BIN_DIR"]) / "lich-hook"
    else:
        venv = tmp_path / "venv"
        run([str(python), "-m", "venv", str(venv)], env)
        run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(REPO)], env)
        program = venv / "bin" / "lich-hook"
    run([str(program), "install", "claude"], env)
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    [group] = settings["hooks"]["SessionStart"]
    command = group["hooks"][0]["command"]
    shutil.rmtree(tmp_path / "old-python")  # the Python upgrade

    card = {**env, **lich.env("card-1")}
    session = json.dumps({"session_id": "s-1", "source": "startup"})
    said = run(["/bin/sh", "-c", command], card, session)
    line = json.loads(said)["systemMessage"]
    print(line)
    fix = re.search(r"Fix: (.*?);", line)
    assert fix is not None, line
    assert lich.received == []

    run(["/bin/sh", "-c", fix.group(1).replace(", then ", " && ")], env)
    ran = subprocess.run(
        ["/bin/sh", "-c", command], input=session.encode(), env=card, capture_output=True
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [report] = lich.wait(1)
    assert report.accepted == {
        "session_id": "card-1",
        "provider_session_id": "s-1",
        "provider": "claude",
    }
