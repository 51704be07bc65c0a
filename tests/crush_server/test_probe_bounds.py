"""What any answer of the crush server may cost the probe: refused before anything is built
when a parse could cost more than a real workspace list's (docs/harnesses.md, Crush)."""

from __future__ import annotations

import json

import pytest

from lich_hooks.hook.shared.crush import probe


def real_list(workspaces: int) -> bytes:
    """Shaped like Crush v0.90's answer with seven providers configured (~9,100 values each)."""
    models = [{"id": f"m{n}", "name": f"Model {n}", "cost_per_1m_in": 1.5, "context_window": 1,
               "can_reason": True, "options": {}} for n in range(90)]  # fmt: skip
    config = {"providers": {f"p{n}": {"models": models, "type": "openai"} for n in range(7)}}
    env = [f"VAR{n}=value-{n}" for n in range(60)]
    spaces = [{"id": f"ws-{n}", "path": f"/p/{n}", "config": config, "env": env}
              for n in range(workspaces)]  # fmt: skip
    return json.dumps(spaces).encode()


def test_a_real_sized_list_passes() -> None:
    body = real_list(20)
    probe.bounded(body)  # twenty workspaces, every one with seven providers


@pytest.mark.parametrize(
    "body",
    [
        b"[" + b",".join([b"[]"] * 200_000) + b"]",  # small containers
        b'[{"a":' * 130_000 + b"1" + b"}]" * 130_000,  # deep nesting
        b"[" + b",".join([b"1"] * 260_000) + b"]",  # bare values
    ],
)
def test_more_values_than_a_real_list_is_refused(body: bytes) -> None:
    with pytest.raises(probe.ProbeError, match="values"):
        probe.bounded(body)


def test_a_wide_answer_is_refused_past_its_smaller_cap() -> None:
    wide = json.dumps(["\U0001f600" * (probe.MAX_WIDE_RESPONSE // 4 + 1)], ensure_ascii=False)
    with pytest.raises(probe.ProbeError, match="bytes"):
        probe.bounded(wide.encode())
    probe.bounded(json.dumps(["\U0001f600" * 1000], ensure_ascii=False).encode())
