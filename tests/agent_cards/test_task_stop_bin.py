"""TaskStop follows the Agent calls' rule for LICH_BIN (docs/agent-cards.md):
an absolute path to an executable file, or lich is not called at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session, stop_payload
from tests.support.runner import run_hook, wait_for_log

HOOK = "PreToolUse claude"
IMPOSTOR = '#!/bin/sh\necho "$0 $*" >> {calls}\nexit 0\n'


@pytest.mark.parametrize("lich_bin", ["lich", "./lich", "bin/lich", "not-executable", ""])
def test_taskstop_with_an_unusable_lich_bin_gives_no_verdict(
    lich_bin: str, card_env: dict[str, str], fake: FakeLich, project: Path, tmp_path: Path
) -> None:
    fake.script(open={"json": session("pending", name="w-1")})
    ran = run_hook(HOOK, agent_payload(project), card_env)
    assert reason(ran.stdout).startswith("Not an error:")
    # An impostor `lich` first on PATH, in the cwd and under it, each recording its calls.
    calls = tmp_path / "impostor-calls"
    for where in (tmp_path / "pathbin", project, project / "bin"):
        where.mkdir(exist_ok=True)
        impostor = where / "lich"
        impostor.write_text(IMPOSTOR.format(calls=calls))
        impostor.chmod(0o755)
    plain = project / "not-executable"
    plain.write_text(IMPOSTOR.format(calls=calls))
    env = {
        **card_env,
        "LICH_BIN": lich_bin if lich_bin != "not-executable" else str(plain),
        "PATH": f"{tmp_path / 'pathbin'}:{card_env['PATH']}",
    }
    ran = run_hook(HOOK, stop_payload(project, task_id="w-1"), env, cwd=project)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert not calls.exists()
    assert wait_for_log(env, 2)[-1]["decision"] in (
        "native:lich-bin-unusable",
        "native:outside-lich",  # an empty LICH_BIN is no LICH_BIN
    )
    assert [argv[0] for argv in fake.argvs()] == ["open"]  # the real lich was not asked either
