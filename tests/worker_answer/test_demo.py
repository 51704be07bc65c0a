from __future__ import annotations

from lich_hooks.commands import demo


def test_demo_shows_a_worker_answering() -> None:
    lines: list[str] = []
    assert demo.run(out=lines.append) == 0
    answer = (
        'lich received: POST /mod/answer {"session_id":"demo-card",'
        '"text":"Rewrote docs/cli.md; the tests pass."} -> 204'
    )
    assert any(line.strip() == answer for line in lines), "\n".join(lines)
    # the top-level session's Stop right before it answered nothing
    worker = next(i for i, line in enumerate(lines) if "a worker's turn ends" in line)
    top = next(i for i, line in enumerate(lines) if "not a worker" in line)
    assert top < worker
    assert lines[top + 2].strip() == "lich received: (nothing)"
