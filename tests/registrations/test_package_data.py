"""The opencode plugin, the omp extension and the plugin route reach users inside the wheel,
not only in a checkout."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULES = {
    "lich_hooks/modules/opencode-plugin.js",
    "lich_hooks/modules/omp-extension.ts",
    # the plugin route, which `lich-hook demo` runs from the installed package
    "lich_hooks/plugin/lich-hook",
    "lich_hooks/plugin/boot.py",
    "lich_hooks/plugin/lich_hooks_boot.py",
    "lich_hooks/plugin/claude-hooks.json",
    "lich_hooks/plugin/codex-hooks.json",
    "lich_hooks/.claude-plugin/plugin.json",
    "lich_hooks/.codex-plugin/plugin.json",
}


def test_the_wheel_ships_the_module_files(tmp_path: Path) -> None:
    # The tests import lich_hooks from the checkout, so look at the installed copy itself.
    installed = Path(sysconfig.get_paths()["purelib"])
    if (installed / "lich_hooks").is_dir():
        # installed from a wheel (CI, `pip install .`): its files and its RECORD
        assert all((installed / name).is_file() for name in MODULES)
        [record] = installed.glob("lich_hooks-*.dist-info/RECORD")
        listed = {line.split(",", 1)[0] for line in record.read_text().splitlines()}
        assert listed >= MODULES
        return
    # an editable checkout reads the source tree: build the wheel to see what it ships
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {built.stderr.strip()[-300:]}")
    [wheel] = tmp_path.glob("lich_hooks-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert set(archive.namelist()) >= MODULES
