"""The sequences that put one card's conversation on another under Codex's daemon, each
named, run through `find_card` as the hook runs it.

The TUIs are real sleeping processes (the rule before this one named them in
its record by pid and start time) and the sessions real rollout files; only
the probe's snapshot of the daemon (its clients and the sessions it holds) is
injected, shaped as probe.py records it from Codex 0.171.0. The first three
fail on the code before this rule (run with its record in the state
directory), each naming card B. The first two are the issue's
adversarial round (docs/harnesses.md, Codex); the third is what the model
(test_codex_model.py) found next: the daemon unloads the resumed session
before the moved TUI's first turn, and nothing is left to see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.hook import procfs
from lich_hooks.hook.shared import codex
from lich_hooks.hook.shared.codex import decide, probe

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="TUIs named by /proc start time")

S1 = "019a1111-1111-7111-8111-111111111111"
S2 = "019a2222-2222-7222-8222-222222222222"
S3 = "019a3333-3333-7333-8333-333333333333"


def card(name: str, port: str) -> dict[str, str]:
    return {"LICH_SESSION_ID": name, "LICH_PORT": port, "LICH_TOKEN": f"tok-{name}-xxxxxxxx"}


class Lab:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.procs: list[subprocess.Popen[bytes]] = []
        self.clients: list[decide.Client] = []
        self.loaded: dict[str, str] = {}
        for name in ("projA", "projB"):
            (root / name).mkdir()
        monkeypatch.setattr(probe, "can_list_clients", lambda proc="/proc": True)
        monkeypatch.setattr(probe, "snapshot", lambda daemon, proc="/proc": self.snapshot())

    def snapshot(self) -> probe.Snapshot:
        return probe.Snapshot(self.clients, self.loaded)

    def dir(self, name: str) -> str:
        return str(self.root / name)

    def tui(self, cwd: str, lich: dict[str, str]) -> decide.Client:
        proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        self.procs.append(proc)
        client = decide.Client(proc.pid, ["codex"], cwd, lich)
        client.started = procfs.started(proc.pid)
        assert client.started is not None
        self.clients.append(client)
        return client

    def rollout(self, sid: str, cwd: str) -> str:
        path = self.root / "sessions" / f"rollout-2026-12-01T10-00-00-{sid}.jsonl"
        path.parent.mkdir(exist_ok=True)
        meta = {"type": "session_meta", "payload": {"id": sid, "cwd": cwd}}
        path.write_text(json.dumps(meta) + "\n")
        return str(path)

    def load(self, sid: str, cwd: str) -> None:
        self.loaded[sid] = self.rollout(sid, cwd)

    def session_start(self, sid: str, cwd: str, source: str = "startup") -> decide.Attribution:
        self.load(sid, cwd)
        return codex.find_card(1, cwd, source, self.loaded[sid])

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    made = Lab(tmp_path, monkeypatch)
    try:
        yield made
    finally:
        made.close()


A, B = card("card-A", "4711"), card("card-B", "4712")


def test_an_attribution_outlives_the_daemon_s_unload(lab: Lab) -> None:
    """B reports S1 in projB; the daemon unloads S1 with no hook in between; A's plain TUI
    in projA `/resume`s S1 ("session directory": projB), the daemon loads S1 again, and A
    `/new`s: a fresh SessionStart in projB. Before: S1 counted as B's, and A's
    conversation went to card B."""
    lab.tui(lab.dir("projB"), B)
    assert lab.session_start(S1, lab.dir("projB")).lich == B  # B's own, B alone connected
    lab.tui(lab.dir("projA"), A)
    del lab.loaded[S1]  # unloaded, no hook saw it
    lab.load(S1, lab.dir("projB"))  # A's /resume loads it again; nothing else shows
    found = lab.session_start(S2, lab.dir("projB"))  # A's /new, its first turn
    assert found.lich != B, found


def test_resuming_a_session_the_daemon_still_holds_is_invisible(lab: Lab) -> None:
    """Same start, but the daemon keeps S1 loaded: A's `/resume S1` changes nothing the
    probe sees, and A's `/new` in projB looks exactly like B's own `/new`. Before: card B."""
    lab.tui(lab.dir("projB"), B)
    assert lab.session_start(S1, lab.dir("projB")).lich == B
    lab.tui(lab.dir("projA"), A)
    found = lab.session_start(S2, lab.dir("projB"))  # A's /new after /resume S1
    assert found.lich != B, found


def test_a_move_whose_resumed_session_was_unloaded_leaves_nothing_to_see(lab: Lab) -> None:
    """Found by the model: A `/resume`s a session recorded in projB (no hook), `/new`s, and
    the daemon unloads the resumed session (Codex's `thread_unload_delay_secs` may be 0)
    before A's first turn there. At that SessionStart nothing says A ever left projA.
    Before: card B, the one TUI working in projB."""
    lab.tui(lab.dir("projA"), A)
    lab.tui(lab.dir("projB"), B)
    lab.rollout(S1, lab.dir("projB"))  # an old session of projB, on disk, not loaded
    found = lab.session_start(S3, lab.dir("projB"))  # A's conversation, fresh, in projB
    assert found.lich != B, found


def test_one_card_connected_still_reports(lab: Lab) -> None:
    """The price stops here: with only one card's TUIs connected, a conversation anywhere
    they can be is that card's."""
    lab.tui(lab.dir("projA"), A)
    lab.tui(lab.dir("projB"), A)
    assert lab.session_start(S1, lab.dir("projB")).lich == A
    assert lab.session_start(S2, lab.dir("projB")).lich == A
    assert lab.session_start(S3, lab.dir("projA"), "resume").lich == A


def test_no_client_of_the_conversation_s_directory_still_refuses(lab: Lab) -> None:
    lab.tui(lab.dir("projA"), A)
    found = lab.session_start(S1, lab.dir("projB"))
    assert found.decision == decide.NO_CLIENT, found
    assert os.path.isdir(lab.dir("projB"))
