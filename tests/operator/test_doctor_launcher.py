"""doctor warns about a pip launcher that imports `re` (docs/performance.md)."""

from __future__ import annotations

from pathlib import Path

from lich_hooks.human.commands.doctor.check import INFO, WARN
from lich_hooks.human.commands.doctor.machine import check_install

OLD_PIP = (
    "#!/venv/bin/python\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
    "from lich_hooks.cli import main\n"
)
NEW_PIP = "#!/venv/bin/python\nimport sys\nfrom lich_hooks.cli import main\n"


def test_an_old_pip_launcher_is_a_warning_with_a_fix(tmp_path: Path) -> None:
    launcher = tmp_path / "lich-hook"
    launcher.write_text(OLD_PIP)
    check = check_install(str(launcher))
    assert check.status == WARN
    assert check.fix is not None and "pip 25.2" in check.fix


def test_a_current_launcher_or_a_binary_is_only_information(tmp_path: Path) -> None:
    launcher = tmp_path / "lich-hook"
    launcher.write_text(NEW_PIP)
    assert check_install(str(launcher)).status == INFO
    launcher.write_bytes(b"MZ\x90\x00import re\n")  # a Windows .exe launcher
    assert check_install(str(launcher)).status == INFO
    assert check_install(None).status == INFO
