"""The transcript fallback answers only what it can prove is this turn's (docs/worker-answer.md,
"The transcript fallback"). Claude Code 2.1.45 runs Stop before it writes the turn: with neither
the turn's prompt nor its reply on disk, the file ends where the last turn did, and its reply
must not answer this one. Lines are written as 2.1.45 writes them (uuids, timestamps, the Stop
hook's progress lines and summary)."""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.base import harnesses
from lich_hooks.base.lichenv import LichEnv
from lich_hooks.base.runlog import RunLog
from lich_hooks.hook.jobs import transcript, worker_answer
from lich_hooks.hook.jobs.transcript import EARLIER_FLOOR, EARLIER_OVER, last_assistant
from lich_hooks.hook.outcome import Context
from lich_hooks.hook.state import stops
from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, run_hook, wait_for_log

Entry = dict[str, object]


def stamp(seconds: float) -> str:
    """Claude Code's `timestamp`: `Date.toISOString()`, milliseconds, UTC."""
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Turn:
    """One turn's lines: its prompt, its reply, its Stop's hook progress and summary."""

    def __init__(self, k: int, at: float) -> None:
        self.k = k
        self.text = f"reply of turn {k}"
        self.prompt: Entry = {
            "type": "user",
            "uuid": f"u-{k}",
            "parentUuid": f"s-{k - 1}" if k > 1 else None,
            "timestamp": stamp(at),
            "message": {"role": "user", "content": f"prompt of turn {k}"},
        }
        self.reply: Entry = {
            "type": "assistant",
            "uuid": f"a-{k}",
            "parentUuid": f"u-{k}",
            "timestamp": stamp(at + 0.05),
            "message": {
                "id": f"msg_{k}",
                "role": "assistant",
                "content": [{"type": "text", "text": self.text}],
            },
        }
        self.progress: Entry = {
            "type": "progress",
            "uuid": f"p-{k}",
            "parentUuid": f"a-{k}",
            "toolUseID": f"stop-{k}",
            "timestamp": stamp(at + 0.06),
            "data": {"type": "hook_progress", "hookEvent": "Stop", "hookName": "Stop"},
        }
        self.summary: Entry = {
            "type": "system",
            "subtype": "stop_hook_summary",
            "uuid": f"s-{k}",
            "parentUuid": f"p-{k}",
            "toolUseID": f"stop-{k}",
            "timestamp": stamp(at + 0.2),
            "hookCount": 1,
        }

    def lines(self, summary: bool = True) -> list[Entry]:
        return [self.prompt, self.reply, self.progress] + ([self.summary] if summary else [])


def write(path: Path, entries: list[Entry]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


# -- the file's own proof: a Stop that is over -----------------------------------------------


def test_a_reply_whose_stop_is_over_is_an_earlier_turn_s(tmp_path: Path) -> None:
    """Turn 1 ended (its Stop's summary is written), turn 2 is not on disk: nothing answers."""
    one = Turn(1, time.time() - 5)
    found = last_assistant(str(write(tmp_path / "t.jsonl", one.lines())))
    assert (found.kind, found.unwritten, found.earlier) == ("none", True, EARLIER_OVER)


@pytest.mark.parametrize(
    "change",
    ["summary-of-another-stop", "progress-after-another-line", "sidechain-summary", "no-summary"],
)
def test_only_the_reply_s_own_stop_summary_ends_it(tmp_path: Path, change: str) -> None:
    """The summary proves the message's Stop over only when it is that Stop's (its toolUseID
    is the one of a progress line following the message) and on the main chain."""
    one = Turn(1, time.time() - 5)
    lines = one.lines()
    if change == "summary-of-another-stop":
        one.summary["toolUseID"] = "stop-other"
    elif change == "progress-after-another-line":
        one.progress["parentUuid"] = "u-1"
    elif change == "sidechain-summary":
        one.summary["isSidechain"] = True
    else:
        lines = one.lines(summary=False)
    found = last_assistant(str(write(tmp_path / "t.jsonl", lines)))
    assert (found.kind, found.text, found.earlier) == ("text", one.text, "")


def test_a_summary_above_the_reply_is_an_earlier_stop_s(tmp_path: Path) -> None:
    now = time.time()
    lines = Turn(1, now - 5).lines() + Turn(2, now - 2).lines(summary=False)
    assert last_assistant(str(write(tmp_path / "t.jsonl", lines))).text == "reply of turn 2"


# -- the previous Stop's time (hook/state/stops.py) -----------------------------------------


@pytest.mark.parametrize(
    ("shift", "kind"),
    [(0.5, "text"), (0.0, "none"), (-0.5, "none")],
    ids=["made-after", "made-at", "made-before"],
)
def test_a_reply_is_this_turn_s_only_if_made_after_the_previous_stop(
    tmp_path: Path, shift: float, kind: str
) -> None:
    one = Turn(1, time.time() - 5)
    made = datetime.fromisoformat(str(one.reply["timestamp"]).replace("Z", "+00:00"))
    previous_stop = made.timestamp() - shift
    path = write(tmp_path / "t.jsonl", one.lines(summary=False))
    found = last_assistant(str(path), after=previous_stop)
    assert found.kind == kind
    assert found.earlier == ("" if kind == "text" else EARLIER_FLOOR)


@pytest.mark.parametrize(
    "made", [None, 1.5, "", "2026-12-03T17:08:26.214", "2026-12-03T17:08:26.214+00:00", "soon Z"]
)
def test_a_reply_without_a_utc_timestamp_proves_nothing_once_a_stop_came_before(
    tmp_path: Path, made: object
) -> None:
    one = Turn(1, time.time() - 5)
    one.reply["timestamp"] = made
    path = write(tmp_path / "t.jsonl", one.lines(summary=False))
    assert last_assistant(str(path), after=0.0).earlier == EARLIER_FLOOR
    assert last_assistant(str(path)).text == one.text  # no Stop before it: nothing to compare


def test_the_previous_stop_is_kept_per_route_and_session(tmp_path: Path) -> None:
    """The other route's run of one Stop is no previous Stop; nor is another session's."""
    environ = base_env(tmp_path)
    mine = worker_answer.stop_name("route-a", "s1")
    assert stops.swap(environ, mine, 10.0) == (None, True)
    assert stops.swap(environ, worker_answer.stop_name("route-b", "s1"), 10.5) == (None, True)
    assert stops.swap(environ, worker_answer.stop_name("route-a", "s2"), 11.0) == (None, True)
    assert stops.swap(environ, mine, 20.0) == (10.0, True)


@pytest.mark.parametrize("held", [b"", b"nan", b"inf", b"-inf x", b"\xff"])
def test_a_record_not_a_time_is_no_previous_stop(tmp_path: Path, held: bytes) -> None:
    environ = base_env(tmp_path)
    (tmp_path / "state" / "stops").mkdir(parents=True)
    (tmp_path / "state" / "stops" / "n").write_bytes(held)
    assert stops.swap(environ, "n", 5.0) == (None, True)


def test_a_state_directory_that_cannot_hold_it_says_so(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file, not a directory")
    assert stops.swap(base_env(tmp_path), "n", 5.0) == (None, False)


# -- through the console script ------------------------------------------------------


def stop(tmp_path: Path, lich: StandIn, path: Path) -> dict[str, object]:
    env = base_env(
        tmp_path, **lich.env("card-t"), LICH_SUBAGENT_DEPTH="1", CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    payload = {
        "session_id": "s",
        "transcript_path": str(path),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    count = len(wait_for_log(env, 0))
    ran = run_hook("Stop claude", payload, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    return wait_for_log(env, count + 1)[-1]


def answers(lich: StandIn, count: int) -> list[dict[str, object]]:
    return [assert_client_body("mod/answer", r.body) for r in lich.wait(count)]


@pytest.mark.parametrize("summary", [False, True], ids=["stop-not-summarised", "stop-summarised"])
def test_a_second_stop_before_its_turn_is_on_disk_answers_nothing_from_turn_1(
    tmp_path: Path, lich: StandIn, summary: bool
) -> None:
    """What the real 2.1.45 did to 31 of 38 later turns (docs/worker-answer.md): turn 2's
    Stop fires with only turn 1 on disk. Its answer is blank, never turn 1's."""
    one = Turn(1, time.time() - 5)
    path = write(tmp_path / "t.jsonl", one.lines(summary=False))
    stop(tmp_path, lich, path)
    write(path, one.lines(summary=summary))
    record = stop(tmp_path, lich, path)
    assert answers(lich, 2) == [
        {"session_id": "card-t", "text": one.text},
        {"session_id": "card-t", "unanswered": "blank"},
    ]
    assert record["transcript_earlier"] == (EARLIER_OVER if summary else EARLIER_FLOOR)


def test_a_second_stop_answers_its_own_turn_once_it_is_written(
    tmp_path: Path, lich: StandIn
) -> None:
    """Late beats wrong: turn 2 is written while its Stop's run reads (once it has kept its
    own time), and the run that may have found only turn 1's reply waits for it."""
    one = Turn(1, time.time() - 5)
    path = write(tmp_path / "t.jsonl", one.lines(summary=False))
    stop(tmp_path, lich, path)
    [mark] = (tmp_path / "state" / "stops").iterdir()
    first = mark.read_bytes()

    def flush_once_stop_2_ran() -> None:
        # Claude Code's flush of turn 2, once the second run has kept its own time
        deadline = time.monotonic() + 30
        while mark.read_bytes() == first and time.monotonic() < deadline:
            time.sleep(0.005)
        two = Turn(2, time.time())
        write(path, one.lines() + two.lines(summary=False))

    writer = threading.Thread(target=flush_once_stop_2_ran)
    writer.start()
    stop(tmp_path, lich, path)
    writer.join()
    assert answers(lich, 2)[1] == {"session_id": "card-t", "text": "reply of turn 2"}


# -- the hook's own HOME -------------------------------------------------------------


def test_a_transcript_under_home_is_read_from_the_hook_s_home(
    tmp_path: Path, lich: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~` is the HOME of the environ the hook was given (base/homes.py), not the process's."""
    environ = base_env(
        tmp_path, **lich.env("card-t"), LICH_SUBAGENT_DEPTH="1", CLAUDE_CODE_SESSION_ATTENDED="1"
    )
    write(Path(environ["HOME"]) / "t.jsonl", Turn(1, time.time() - 5).lines(summary=False))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write(elsewhere / "t.jsonl", Turn(7, time.time() - 5).lines(summary=False))
    monkeypatch.setenv("HOME", str(elsewhere))
    read, written = os.pipe()
    os.write(written, json.dumps({"session_id": "s", "transcript_path": "~/t.jsonl"}).encode())
    os.close(written)
    route = harnesses.route("claude", "Stop")
    assert route is not None
    ctx = Context("Stop", "claude", route, environ, LichEnv(environ), RunLog(environ), read)
    try:
        outcome = worker_answer.run(ctx)
    finally:
        os.close(read)
    assert outcome.body == {"session_id": "card-t", "text": "reply of turn 1"}


@pytest.mark.parametrize(
    ("path", "home", "expanded"),
    [
        ("~/t.jsonl", "/h", "/h/t.jsonl"),
        ("~", "/h", "/h"),
        ("/abs/t.jsonl", "/h", "/abs/t.jsonl"),
        ("~user/t.jsonl", "/h", "~user/t.jsonl"),
        ("~/t.jsonl", "relative", None),
    ],
)
def test_expand(path: str, home: str, expanded: str | None) -> None:
    assert transcript.expand(path, {"HOME": home}) == expanded


# -- the model: every timing of Claude Code's writes -------------------------------------

# Per turn, in ms: the prompt after the previous turn ended, the reply after the prompt, the
# Stop after the reply, the hook's start after the Stop, the hook's run; and how many more of
# the lines written so far are on disk when the hook reads (Claude Code flushes every ~100 ms,
# and a loaded machine delays it without bound).
TURN = st.tuples(
    st.integers(1, 3000),
    st.integers(1, 3000),
    st.integers(0, 50),
    st.integers(1, 2000),
    st.integers(1, 2000),
    st.integers(0, 4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TURN, min_size=1, max_size=6), st.booleans())
def test_no_timing_answers_a_turn_with_an_earlier_turn_s_reply(
    turns: list[tuple[int, int, int, int, int, int]], kept: bool
) -> None:
    """Whatever is on disk when each Stop's hook reads: the answer is this turn's reply or none,
    and it is this turn's reply whenever that is on disk. Without the previous Stop's time (a
    state directory that cannot hold it) an earlier reply is answered only while that turn's
    Stop summary is not on disk either, the one case the file alone cannot tell."""
    import tempfile

    written: list[Entry] = []  # in the order Claude Code queues them
    on_disk = 0
    ended = 1_000_000.0  # ms
    previous_stop: float | None = None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        for k, (to_prompt, to_reply, to_stop, to_hook, run, flushed) in enumerate(turns, 1):
            prompt_at = ended + to_prompt
            turn = Turn(k, prompt_at / 1000)
            stop_at = prompt_at + to_reply + to_stop
            turn.reply["timestamp"] = stamp((prompt_at + to_reply) / 1000)
            turn.progress["timestamp"] = stamp(stop_at / 1000)
            started = stop_at + to_hook
            written += [turn.prompt, turn.reply, turn.progress]
            on_disk = min(len(written), on_disk + flushed)
            write(path, written[:on_disk])
            found = last_assistant(str(path), after=previous_stop if kept else None)
            reply_on_disk = turn.reply in written[:on_disk]
            if found.kind == "text" and found.text != turn.text:
                assert not kept, (k, found.text)
                assert turns_summary_missing(written[:on_disk], k - 1), (k, found.text)
            if reply_on_disk:
                assert (found.kind, found.text) == ("text", turn.text)
            previous_stop = started / 1000  # the run keeps its start (hook/state/stops.py)
            ended = started + run
            turn.summary["timestamp"] = stamp(ended / 1000)
            written.append(turn.summary)


def turns_summary_missing(on_disk: list[Entry], k: int) -> bool:
    return not any(e.get("uuid") == f"s-{k}" for e in on_disk)
