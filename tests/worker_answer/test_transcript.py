"""The transcript fallback (docs/worker-answer.md): an older Claude Code's Stop has no
`last_assistant_message`, so the answer is the transcript's last assistant
message, read from the end within a byte bound."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.hook.jobs import transcript
from lich_hooks.hook.jobs.transcript import Found, last_assistant
from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, run_hook, start_seconds, wait_for_log


def user(text: str, **extra: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": text}, **extra}


def tool_result(tool_id: str = "toolu_1") -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def assistant(*blocks: object, mid: str = "msg_1", **extra: object) -> dict[str, object]:
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    message = {"id": mid, "role": "assistant", "content": content}
    return {"type": "assistant", "message": message, **extra}


TOOL_USE: dict[str, object] = {
    "type": "tool_use",
    "id": "toolu_1",
    "name": "Bash",
    "input": {"command": "ls"},
}
THINKING: dict[str, object] = {"type": "thinking", "thinking": "hmm", "signature": "x"}
NOISE: list[object] = [
    {"type": "system", "subtype": "stop_hook_summary", "content": "assistant"},
    {"type": "file-history-snapshot", "snapshot": {}},
    {"type": "summary", "summary": "assistant did things"},
]


def write(path: Path, entries: Sequence[object], trailing: bool = True) -> Path:
    lines = [e if isinstance(e, str) else json.dumps(e) for e in entries]
    path.write_text("\n".join(lines) + ("\n" if trailing else ""))
    return path


def found(tmp_path: Path, entries: Sequence[object], **kw: object) -> Found:
    return last_assistant(str(write(tmp_path / "t.jsonl", entries, **kw)))  # type: ignore[arg-type]


def test_the_last_assistant_message(tmp_path: Path) -> None:
    entries = [
        user("do it"),
        assistant("Looking.", TOOL_USE, mid="m1"),
        tool_result(),
        assistant("All done.", mid="m2"),
        *NOISE,
    ]
    result = found(tmp_path, entries)
    assert (result.kind, result.text) == ("text", "All done.")


def test_blocks_of_one_message_on_several_lines_are_joined(tmp_path: Path) -> None:
    """Claude Code writes each content block of a message as its own line."""
    entries = [
        user("go"),
        assistant(THINKING, mid="m9"),
        assistant("First part.", mid="m9"),
        assistant("Second part.", mid="m9"),
    ]
    assert found(tmp_path, entries).text == "First part.\nSecond part."


def test_text_blocks_in_one_line_are_joined(tmp_path: Path) -> None:
    entries = [assistant("One.", THINKING, "Two.")]
    assert found(tmp_path, entries).text == "One.\nTwo."


def test_a_string_content_is_the_text(tmp_path: Path) -> None:
    entry = {"type": "assistant", "message": {"role": "assistant", "content": "Plain."}}
    assert found(tmp_path, [entry]).text == "Plain."


def test_an_earlier_message_is_not_joined(tmp_path: Path) -> None:
    entries = [assistant("Old.", mid="m1"), assistant("New.", mid="m2")]
    assert found(tmp_path, entries).text == "New."


def test_sidechain_lines_are_skipped(tmp_path: Path) -> None:
    entries = [
        assistant("Main answer.", mid="m1"),
        assistant("Subagent's.", mid="s1", isSidechain=True),
    ]
    assert found(tmp_path, entries).text == "Main answer."


def test_meta_user_lines_are_skipped(tmp_path: Path) -> None:
    entries = [assistant("Answer.", mid="m1"), user("<local-command-caveat>", isMeta=True)]
    assert found(tmp_path, entries).text == "Answer."


def _first_turn(reply: dict[str, object], prompt_last: bool) -> list[object]:
    """A first turn's lines as Claude Code 2.1.45 writes them: in the conversation's order, or
    (7 of 28 real first turns of tests/real_clients/test_claude_worker_answer.py) with the
    SessionStart hook's progress line and the prompt written after the reply."""
    started: dict[str, object] = {
        "type": "progress",
        "uuid": "p-start",
        "parentUuid": None,
        "data": {},
    }
    prompt = user("Do the errand.", uuid="u-1", parentUuid="p-start")
    snapshot = {"type": "file-history-snapshot", "snapshot": {}}
    stopping = {"type": "progress", "uuid": "p-stop", "parentUuid": reply["uuid"], "data": {}}
    if prompt_last:
        return [snapshot, reply, stopping, started, prompt]
    return [started, prompt, snapshot, reply, stopping]


@pytest.mark.parametrize("prompt_last", [False, True], ids=["in-order", "prompt-last"])
def test_a_first_turn_s_reply_is_found_wherever_its_prompt_is(
    tmp_path: Path, prompt_last: bool
) -> None:
    reply = assistant("Errand done.", mid="msg_2", uuid="a-1", parentUuid="u-1")
    result = found(tmp_path, _first_turn(reply, prompt_last))
    assert (result.kind, result.text, result.unwritten) == ("text", "Errand done.", False)


def test_a_reply_of_several_lines_answers_a_prompt_written_after_it(tmp_path: Path) -> None:
    entries = [
        assistant(THINKING, mid="msg_2", uuid="a-1", parentUuid="u-1"),
        assistant("Errand done.", mid="msg_2", uuid="a-2", parentUuid="a-1"),
        user("Do the errand.", uuid="u-1", parentUuid=None),
    ]
    assert found(tmp_path, entries).text == "Errand done."


def test_an_api_error_answering_a_prompt_written_after_it_is_recognised(tmp_path: Path) -> None:
    error = assistant(
        "API Error: 500", mid="e", uuid="a-1", parentUuid="u-1", isApiErrorMessage=True
    )
    entries = [error, user("Do the errand.", uuid="u-1", parentUuid=None)]
    assert found(tmp_path, entries).kind == transcript.API_ERROR


@pytest.mark.parametrize(
    "entries",
    [
        [
            user("first", uuid="u-1"),
            assistant("Old turn.", mid="m1", uuid="a-1", parentUuid="u-1"),
            user("a new prompt", uuid="u-2", parentUuid="a-1"),
        ],
        [
            user("first", uuid="u-1"),
            assistant("Old", mid="m1", uuid="a-1", parentUuid="u-1"),
            assistant("turn.", mid="m1", uuid="a-2", parentUuid="a-1"),
            user("a new prompt", uuid="u-2", parentUuid="a-2"),
        ],
        [
            assistant("API Error: 500", uuid="a-1", parentUuid="u-1", isApiErrorMessage=True),
            user("a new prompt", uuid="u-2", parentUuid="a-1"),
        ],
    ],
    ids=["one-line", "several-lines", "api-error"],
)
def test_an_earlier_turn_s_message_never_answers_a_newer_prompt(
    tmp_path: Path, entries: Sequence[object]
) -> None:
    result = found(tmp_path, entries)
    assert (result.kind, result.unwritten) == ("none", True)


@pytest.mark.parametrize(
    "entries",
    [
        [
            assistant("Old turn.", mid="m1"),
            user("a new prompt"),
        ],  # the turn's reply is not written yet
        [user("go"), assistant("Let me look.", TOOL_USE, mid="m1")],  # not a final message
        [user("go"), assistant("Let me look.", TOOL_USE, mid="m1"), tool_result()],
        [user("go")],
        [],
        NOISE,
        [assistant(THINKING, mid="m1")],  # a final message with no text
    ],
    ids=[
        "prompt-last",
        "tool-use-last",
        "tool-result-last",
        "no-assistant",
        "empty",
        "noise",
        "no-text",
    ],
)
def test_no_final_message(tmp_path: Path, entries: Sequence[object]) -> None:
    result = found(tmp_path, entries)
    assert result.kind == "none" or (result.kind == "text" and not result.text.strip())


def test_api_error_message_is_recognised(tmp_path: Path) -> None:
    entries = [user("go"), assistant("API Error: 529 overloaded", isApiErrorMessage=True, mid="e")]
    assert found(tmp_path, entries).kind == transcript.API_ERROR


def test_corrupt_lines_are_skipped(tmp_path: Path) -> None:
    entries = [assistant("Answer.", mid="m1"), '{"type": "assistant", "message": {', "\x00garbage"]
    assert found(tmp_path, entries).text == "Answer."


def test_no_trailing_newline(tmp_path: Path) -> None:
    assert found(tmp_path, [assistant("Answer.")], trailing=False).text == "Answer."


@pytest.mark.parametrize("name", ["missing.jsonl", "dir", "fifo"])
def test_unreadable(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name == "dir":
        path.mkdir()
    elif name == "fifo":
        os.mkfifo(path)  # opening it must not block
    assert last_assistant(str(path)).kind == "unreadable"


def test_beyond_the_bound_is_not_found(tmp_path: Path) -> None:
    entries = [
        assistant("Deep answer.", mid="m1"),
        *[{"type": "progress", "data": "x" * 1000}] * 50,
    ]
    path = write(tmp_path / "t.jsonl", entries)
    assert last_assistant(str(path), limit=10_000).kind == "none"
    assert last_assistant(str(path), limit=100_000).text == "Deep answer."


def test_a_line_cut_by_the_bound_is_not_parsed(tmp_path: Path) -> None:
    big = assistant("x" * 5000, mid="m1")
    path = write(tmp_path / "t.jsonl", [big])
    assert last_assistant(str(path), limit=4000).kind == "none"


LINES = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30)


@settings(max_examples=150, deadline=None)
@given(LINES, st.integers(1, 50), st.booleans())
def test_reading_backwards_in_blocks(lines: list[bytes], block: int, trailing: bool) -> None:
    """Whatever the block size, the lines come back whole, last first."""
    import tempfile

    data = b"\n".join(lines) + (b"\n" if trailing else b"")
    with tempfile.NamedTemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        saved = transcript.BLOCK
        transcript.BLOCK = block
        try:
            produced = transcript._lines_from_end(handle.name, 1 << 20)
            assert produced is not None
            got = list(produced)
        finally:
            transcript.BLOCK = saved
    assert got == [line for line in reversed(lines) if line.strip()]


# -- through the console script ------------------------------------------------------


def stop_without_message(
    tmp_path: Path, lich: StandIn, transcript_path: object
) -> dict[str, object]:
    env = base_env(
        tmp_path, **lich.env("card-t"), LICH_SUBAGENT_DEPTH="1", CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    payload: dict[str, object] = {
        "session_id": "s",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    if transcript_path is not None:
        payload["transcript_path"] = transcript_path
    ran = run_hook("Stop claude", payload, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    return record


def test_older_claude_code_answers_from_the_transcript(tmp_path: Path, lich: StandIn) -> None:
    path = write(tmp_path / "t.jsonl", [user("go"), assistant("From the transcript. ✅")])
    record = stop_without_message(tmp_path, lich, str(path))
    [request] = lich.wait(1)
    assert assert_client_body("mod/answer", request.body) == {
        "session_id": "card-t",
        "text": "From the transcript. ✅",
    }
    assert record["transcript"] == "text"


@pytest.mark.parametrize("where", ["missing", "corrupt", "absent", "empty-string", "number"])
def test_no_usable_transcript_is_blank(tmp_path: Path, lich: StandIn, where: str) -> None:
    path: object = {
        "missing": str(tmp_path / "nope.jsonl"),
        "corrupt": str(write(tmp_path / "c.jsonl", ["{not json", "\xff"])),
        "absent": None,
        "empty-string": "",
        "number": 42,
    }[where]
    stop_without_message(tmp_path, lich, path)
    [request] = lich.wait(1)
    assert assert_client_body("mod/answer", request.body) == {
        "session_id": "card-t",
        "unanswered": "blank",
    }


def test_null_message_reads_the_transcript(tmp_path: Path, lich: StandIn) -> None:
    path = write(tmp_path / "t.jsonl", [assistant("Answer.")])
    env = base_env(
        tmp_path, **lich.env("card-t"), LICH_SUBAGENT_DEPTH="1", CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    payload: dict[str, object] = {
        "session_id": "s",
        "transcript_path": str(path),
        "last_assistant_message": None,
    }
    run_hook("Stop claude", payload, env)
    [request] = lich.wait(1)
    assert assert_client_body("mod/answer", request.body)["text"] == "Answer."


def test_present_message_wins_over_the_transcript(tmp_path: Path, lich: StandIn) -> None:
    path = write(tmp_path / "t.jsonl", [assistant("Stale.")])
    env = base_env(
        tmp_path, **lich.env("card-t"), LICH_SUBAGENT_DEPTH="1", CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    payload: dict[str, object] = {
        "session_id": "s",
        "transcript_path": str(path),
        "last_assistant_message": "",
    }
    run_hook("Stop claude", payload, env)
    [request] = lich.wait(1)
    assert assert_client_body("mod/answer", request.body)["unanswered"] == "blank"


def test_api_error_in_the_transcript_sends_nothing(tmp_path: Path, lich: StandIn) -> None:
    path = write(
        tmp_path / "t.jsonl", [user("go"), assistant("API Error: 500", isApiErrorMessage=True)]
    )
    record = stop_without_message(tmp_path, lich, str(path))
    assert record["decision"] == "api-error"
    assert lich.received == []


# -- a turn not written yet (Claude Code 2.1.45 runs Stop before it flushes the turn) --------


@pytest.mark.parametrize(
    ("entries", "unwritten"),
    [
        (None, True),  # no file yet: a first turn
        ([user("go")], True),
        (
            [user("go"), assistant({"type": "tool_use", "id": "t", "name": "Bash", "input": {}})],
            True,
        ),
        ([user("go"), assistant("Done.")], False),
        ([user("go"), assistant(THINKING)], False),  # final, just without text
        ([{"type": "file-history-snapshot"}, {"type": "progress"}], True),  # 2.1.45's first lines
    ],
    ids=["no-file", "prompt-last", "tool-use-last", "answered", "no-text", "no-conversation"],
)
def test_unwritten_is_only_a_turn_still_to_come(
    tmp_path: Path, entries: Sequence[object] | None, unwritten: bool
) -> None:
    path = tmp_path / "t.jsonl"
    if entries is not None:
        write(path, entries)
    assert last_assistant(str(path)).unwritten is unwritten


def test_a_directory_or_fifo_is_not_waited_for(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    for name in ("dir", "fifo"):
        assert last_assistant(str(tmp_path / name)).unwritten is False


def _write_later(path: Path, entries: Sequence[object], delay: float) -> threading.Thread:
    """Claude Code's flush, `delay` seconds after the hook started reading."""
    writer = threading.Timer(delay, lambda: write(path, entries))
    writer.start()
    return writer


def test_settled_reads_the_turn_once_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    writer = _write_later(path, [user("go"), assistant("Late answer.")], 0.2)
    found, waited = transcript.settled(str(path))
    writer.join()
    assert (found.kind, found.text) == ("text", "Late answer.")
    assert 0 < waited < transcript.SETTLE_S * 1000


def test_settled_gives_up_after_its_wait(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [user("go")])
    found, waited = transcript.settled(str(path), wait=0.1)
    assert (found.kind, found.unwritten) == ("none", True)
    assert waited >= 100


def test_a_transcript_written_after_stop_still_answers(tmp_path: Path, lich: StandIn) -> None:
    """What the real Claude Code 2.1.45 does: the file of a first turn appears while the
    Stop hook runs (tests/real_clients/test_claude_worker_answer.py proves it there)."""
    path = tmp_path / "late.jsonl"
    # 0.3 s after the hook, started now, reaches its read on this machine (measured)
    later = start_seconds() + 0.3
    writer = _write_later(path, [user("go"), assistant("Written after Stop.")], later)
    record = stop_without_message(tmp_path, lich, str(path))
    writer.join()
    [request] = lich.wait(1)
    assert assert_client_body("mod/answer", request.body) == {
        "session_id": "card-t",
        "text": "Written after Stop.",
    }
    assert record["transcript"] == "text"
    assert isinstance(record["transcript_wait_ms"], float) and record["transcript_wait_ms"] > 0
