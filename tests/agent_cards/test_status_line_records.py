"""docs/agent-cards.md, "The status line": each worker record is checked field by field, and
one run reads a bounded part of the card's folder whatever it holds (a count it could not
finish shows as `N+`, never as a smaller number)."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lich_hooks.hook import status_line
from lich_hooks.hook.jobs.agent_cards import record
from tests.agent_cards.fake_lich import FakeLich
from tests.agent_cards.test_status_line import open_worker, rows, status
from tests.support.runner import log_records


def card_dir(env: dict[str, str]) -> Path:
    return Path(env["LICH_HOOK_STATE_DIR"]) / "workers" / "card-1"


def test_a_record_whose_time_overflows_a_float_hides_no_other(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    """`when` = 10**400 raised OverflowError: the line was empty and the log said
    internal-error. The bad record is skipped and left to the pruner."""
    open_worker(card_env, fake, project, "w-a")
    bad = card_dir(card_env) / "w-bad.json"
    bad.write_text('{"name": "w-bad", "when": 1' + "0" * 400 + "}")
    fake.script(sessions=rows(("w-a", "running"), ("w-bad", "running")))
    assert status(card_env) == b"lich: 1 worker\n"
    assert "internal-error" not in [r["decision"] for r in log_records(card_env)]
    assert bad.exists()


# --- what a record may hold -----------------------------------------------------------------

TEXT = ("label", "description", "path")
TEXT_OR_NONE = ("id", "branch", "tool_use_id")
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
OTHER_KEYS = st.dictionaries(
    st.text(max_size=8).filter(lambda key: key not in ("name", "when", *TEXT, *TEXT_OR_NONE)),
    JSON,
    max_size=3,
)


@st.composite
def valid_records(draw: st.DrawFn) -> dict[str, object]:
    """What `add` writes, or an older record missing some fields, with keys of no one's."""
    found: dict[str, object] = dict(draw(OTHER_KEYS))
    found["name"] = draw(st.text(min_size=1, max_size=40))
    found["when"] = draw(
        st.floats(min_value=0, max_value=1e12) | st.integers(min_value=0, max_value=2**53 - 1)
    )
    for key in TEXT:
        if draw(st.booleans()):
            found[key] = draw(st.text(max_size=200))
    for key in TEXT_OR_NONE:
        if draw(st.booleans()):
            found[key] = draw(st.none() | st.text(max_size=60))
    return found


NOT_TEXT = JSON.filter(lambda value: not isinstance(value, str))
BAD_FIELD = {
    "name": st.just("") | NOT_TEXT,
    "when": st.one_of(
        st.integers(min_value=2**53),
        st.integers(max_value=-1),
        st.floats().filter(lambda value: not 0 <= value < math.inf),
        JSON.filter(lambda value: isinstance(value, bool) or not isinstance(value, (int, float))),
    ),
    **dict.fromkeys(TEXT, NOT_TEXT),
    **dict.fromkeys(TEXT_OR_NONE, NOT_TEXT.filter(lambda value: value is not None)),
}


@st.composite
def hostile_files(draw: st.DrawFn) -> bytes:
    """A record with one field of a wrong type or range, or a file that is no record."""
    kind = draw(st.sampled_from(["field", "missing", "bytes", "not-an-object", "too-large"]))
    worker = draw(valid_records())
    if kind == "field":
        key = draw(st.sampled_from(sorted(BAD_FIELD)))
        worker[key] = draw(BAD_FIELD[key])
    elif kind == "missing":
        del worker[draw(st.sampled_from(["name", "when"]))]
    elif kind == "bytes":
        return draw(st.binary(max_size=300))
    elif kind == "not-an-object":
        return json.dumps(draw(JSON.filter(lambda value: not isinstance(value, dict)))).encode()
    else:
        worker["description"] = "x" * record.RECORD_LIMIT
    return json.dumps(worker).encode()  # NaN and Infinity too, as Python writes them


def count(files: dict[str, bytes]) -> tuple[int, bool]:
    """The status line's count over a card folder holding `files`, its last look at lich
    recent (the count is the records')."""
    with tempfile.TemporaryDirectory() as state:
        folder = Path(state, "workers", "card-1")
        folder.mkdir(parents=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
        now = time.time()
        (folder / ".checked").write_text(repr(now))
        environ = {"LICH_HOOK_STATE_DIR": state, "LICH_SESSION_ID": "card-1", "LICH_PORT": "9"}
        return status_line.count_workers(environ, now)


PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(hostile=hostile_files())
def test_a_hostile_record_is_skipped_and_hides_no_other(hostile: bytes) -> None:
    good = json.dumps({"name": "w-good", "when": time.time()}).encode()
    assert count({"w-good.json": good, "w-hostile.json": hostile}) == (1, True)


@PROPERTY
@given(worker=valid_records())
def test_every_record_of_the_right_types_counts(worker: dict[str, object]) -> None:
    good = json.dumps({"name": "w-good", "when": time.time()}).encode()
    assert count({"w-good.json": good, "w-other.json": json.dumps(worker).encode()}) == (2, True)


# --- the bound on one run --------------------------------------------------------------------


def fill(folder: Path, number: int, size: int = 0) -> None:
    """`number` fresh records of lich-unknown workers, each padded to `size` bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(number):
        body = json.dumps({"name": f"w-{n}", "when": time.time(), "description": ""})
        padded = body[:-2] + "x" * max(0, size - len(body)) + '"}'
        (folder / f"w-{n}.json").write_text(padded)


@pytest.mark.parametrize(
    ("number", "size", "shown"),
    [
        (record.SCAN_LIMIT + 1, 0, b"lich: 200+ workers\n"),
        (record.READ_LIMIT + 1, 60 << 10, b"lich: 0+ workers\n"),  # larger than add writes
        (record.READ_LIMIT + 1, 0, b"lich: 200+ workers\n"),
        (record.READ_LIMIT, 0, b"lich: 200 workers\n"),
    ],
)
def test_one_run_reads_a_bounded_part_of_the_folder(
    card_env: dict[str, str], number: int, size: int, shown: bytes
) -> None:
    """Before, every fresh record was read and parsed: 1.5 s and 125 MiB with 2,000 of
    60 KiB, 1.45 s with 30,000 tiny ones (benchmarks/prune_wait.py measures both). Now
    at most READ_LIMIT records of RECORD_LIMIT bytes, the newest among SCAN_LIMIT entries:
    past that, the count of what it read, with a `+`."""
    fill(card_dir(card_env), number, size)
    (card_dir(card_env) / ".checked").write_text(repr(time.time()))
    (Path(card_env["LICH_HOOK_STATE_DIR"]) / ".pruned").touch()  # no prune due
    assert status(card_env) == shown


def test_a_folder_past_the_bound_is_pruned_back_under_it(card_env: dict[str, str]) -> None:
    """The run that showed `N+` starts the pruner (when one is due), which keeps the newest
    200 records: the next run's count is whole again."""
    folder = card_dir(card_env)
    fill(folder, record.SCAN_LIMIT + 1)
    (folder / ".checked").write_text(repr(time.time()))
    assert status(card_env) == b"lich: 200+ workers\n"
    deadline = time.monotonic() + 30
    while len(list(folder.iterdir())) > record.READ_LIMIT + 1 and time.monotonic() < deadline:
        time.sleep(0.05)  # the detached pruner, polled for its result
    assert status(card_env) == b"lich: 200 workers\n"


def test_records_are_read_newest_first(card_env: dict[str, str]) -> None:
    """Past the read limit the newest records are the ones read: a worker just opened shows."""
    folder = card_dir(card_env)
    fill(folder, record.READ_LIMIT + 50)
    hour_ago = time.time() - 3600
    for path in folder.iterdir():
        os.utime(path, (hour_ago, hour_ago))
    (folder / "w-new.json").write_text(json.dumps({"name": "w-new", "when": time.time()}))
    environ = {"LICH_HOOK_STATE_DIR": card_env["LICH_HOOK_STATE_DIR"]}
    workers, whole = record.workers(environ, "card-1", time.time())
    assert not whole and len(workers) == record.READ_LIMIT
    assert "w-new" in [worker["name"] for worker in workers]
