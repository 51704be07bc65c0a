"""Two lich cards running Crush v0.90.0 with CRUSH_CLIENT_SERVER=1 share one `crush server`.

In that mode the first client spawns a detached `crush server` on
`$XDG_RUNTIME_DIR/crush-<uid>.sock`, every later client joins it, and every
hook runs inside the server with the first client's environment. These tests
start real TUIs in tmux, each a card with its own LICH_SESSION_ID and its own
lich listener (port and token), and check which card each report names: its
own, or (when two cards share a directory, and so one workspace) none. Never
the other card. Each test has its own runtime dir, so its own server, and
stops it at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.real_clients.support import crush as cr
from tests.real_clients.support.clients import Client
from tests.real_clients.support.model_api import AFTER_TOOL_TEXT, ModelAPI
from tests.real_clients.support.tmux import Screen
from tests.real_clients.test_registration_routes import doctor, reports
from tests.support.contract_check import assert_client_body
from tests.support.runner import log_records

pytestmark = [
    pytest.mark.real_client,
    pytest.mark.skipif(sys.platform != "linux", reason="server attribution reads /proc"),
]

LS = '[[tool:ls {"path": "."}]]'


class Lab:
    """One HOME, one runtime dir (so one server), project dirs, and one hook log for all cards."""

    def __init__(self, root: Path, client: Client, api: ModelAPI) -> None:
        self.root = root
        self.client = client
        home = root / "home"
        cr.seed_home(home, api.base_url)
        self.run_dir = cr.runtime_dir()
        self.dirs = {name: root / name for name in ("projA", "projB", "projC")}
        for folder in self.dirs.values():
            folder.mkdir()
        # the server's LICH_HOOK_LOG is its first client's: one log for every card
        self.base = cr.crush_env(root, home, self.run_dir, CRUSH_CLIENT_SERVER="1")
        self.tuis = 0

    def card_env(self, card: str, lich: StandIn) -> dict[str, str]:
        return {**self.base, **lich.env(card)}

    def records(self) -> list[dict[str, object]]:
        return [r for r in log_records(self.base) if r.get("event") == "PreToolUse"]

    def wait_records(self, count: int, timeout: float = 60.0) -> list[dict[str, object]]:
        deadline = time.monotonic() + timeout
        while len(self.records()) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return self.records()

    def sessions(self, where: str) -> list[str]:
        return [str(s["uuid"]) for s in cr.sessions(self.client, self.base, self.dirs[where])]


@pytest.fixture
def lab(crush: Client, tmp_path: Path, model_api: ModelAPI) -> Iterator[Lab]:
    lab = Lab(tmp_path, crush, model_api)
    try:
        yield lab
    finally:
        cr.stop_servers(lab.run_dir)
        assert cr.servers(lab.run_dir) == [], "a crush server outlived its test"


def start(stack: ExitStack, lab: Lab, env: dict[str, str], where: str) -> Screen:
    lab.tuis += 1
    return stack.enter_context(
        cr.tui(lab.client, env, lab.dirs[where], lab.root / f"tui{lab.tuis}")
    )


def accepted(lich: StandIn) -> list[dict[str, object]]:
    return [assert_client_body("session-start", r.body) for r in lich.received if r.status == 204]


def test_two_cards_in_different_dirs_each_report_their_own(lab: Lab) -> None:
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        card_a = start(stack, lab, lab.card_env("card-A", lich_a), "projA")
        card_a.submit(f"card A {LS} {LS}")
        lab.wait_records(2)
        [server] = cr.servers(lab.run_dir)  # card A's TUI started it, with card A's variables
        card_b = start(stack, lab, lab.card_env("card-B", lich_b), "projB")
        assert cr.servers(lab.run_dir) == [server], "card B's TUI did not join the server"
        card_b.submit(f"card B {LS} {LS}")
        lab.wait_records(4)
        card_b.wait_for(AFTER_TOOL_TEXT)
        card_b.keys("C-n")  # a new session in card B's TUI reports once more, to card B
        card_b.submit(f"card B again {LS} {LS}")
        records = lab.wait_records(6)
        lich_a.wait(1)
        lich_b.wait(2)
    assert [a["session_id"] for a in accepted(lich_a)] == ["card-A"]
    assert [a["session_id"] for a in accepted(lich_b)] == ["card-B", "card-B"]
    assert [a["provider_session_id"] for a in accepted(lich_a)] == lab.sessions("projA")
    assert sorted(str(a["provider_session_id"]) for a in accepted(lich_b)) == sorted(
        lab.sessions("projB")
    )
    decisions = sorted(str(r["decision"]) for r in records)  # logged as each run ends
    assert decisions == ["already-reported"] * 3 + ["report"] * 3, records
    assert all(f"crush server {server}" in str(r.get("crush_runner")) for r in records)
    print(f"\ncard-A -> {accepted(lich_a)}\ncard-B -> {accepted(lich_b)}")
    print(f"attribution: {[(r['attribution'], r.get('attribution_ms')) for r in records]}")


def test_two_cards_in_one_dir_never_name_the_wrong_card(lab: Lab) -> None:
    with StandIn() as lich_c, StandIn() as lich_d, ExitStack() as stack:
        card_c = start(stack, lab, lab.card_env("card-C", lich_c), "projC")
        card_d = start(stack, lab, lab.card_env("card-D", lich_d), "projC")
        card_d.submit(f"card D {LS}")
        lab.wait_records(1)
        card_c.submit(f"card C {LS}")
        records = lab.wait_records(2)
        assert len(cr.servers(lab.run_dir)) == 1
        _, said = doctor(lab.card_env("card-D", lich_d), lab.dirs["projC"])
    assert [r["decision"] for r in records] == ["crush-server-several-cards"] * 2, records
    # doctor names the server, the card it carries, and the directory two cards share
    assert "crush server" in said and "LICH_SESSION_ID=card-C" in said, said
    assert "another card's: this terminal is card-D" in said
    assert f"reports are dropped in {lab.dirs['projC']}" in said and "2 different cards" in said
    # one workspace for projC, carrying card C's variables (first wins); card D joined it
    assert "card-C" in str(records[0]["attribution"]) and "card-D" in str(records[0]["attribution"])
    assert reports(lich_c) == [] and reports(lich_d) == []  # doctor probed card D: no report
    print(f"\nsame dir: {records[0]['attribution']}\ndoctor:\n{said}")


def test_crush_run_joins_the_server_and_reports_nothing(lab: Lab) -> None:
    """A `crush run` shows its session in no TUI (the server counts it among no session's
    `attached_clients`), exactly like a turn whose TUI quit while another client keeps the
    workspace: nothing says whose it is, so nothing is sent (docs/harnesses.md, Crush)."""
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        start(stack, lab, lab.card_env("card-A", lich_a), "projA")  # starts the server
        assert len(cr.servers(lab.run_dir)) == 1
        done = cr.run(lab.client, f"{LS} {LS}", lab.card_env("card-B", lich_b), lab.dirs["projB"])
        assert done.returncode == 0, done.stderr
        records = lab.wait_records(2)
        assert lich_b.wait(1, timeout=1) == []
    assert lich_a.received == []
    assert [r["decision"] for r in records] == ["crush-server-no-client"] * 2, records
    # the second call's refusal is the first's, remembered (docs/harnesses.md, Crush)
    said = sorted(str(r["attribution"]) for r in records)
    assert "no crush TUI shows session" in said[0] and "within 30 s" in said[1], said
    assert all("crush server" in str(r.get("crush_runner")) for r in records)


def test_a_client_under_another_name_names_no_card(lab: Lab) -> None:
    """Issue 31: card B's TUI started through a symlink (`cx`) in card A's folder joins card
    A's workspace. Before, only processes named crush were clients, and card B's
    conversation was reported on card A. Its connection is counted: nothing is sent."""
    cx = lab.root / "bin" / "cx"
    cx.parent.mkdir()
    cx.symlink_to(lab.client.binary)
    renamed = Client("crush", cx, lab.client.version, lab.client.release)
    with StandIn() as lich_a, StandIn() as lich_b, ExitStack() as stack:
        card_a = start(stack, lab, lab.card_env("card-A", lich_a), "projA")
        card_a.submit(f"card A {LS}")
        lab.wait_records(1)
        lich_a.wait(1)
        lab.tuis += 1
        env_b = lab.card_env("card-B", lich_b)
        card_b = stack.enter_context(
            cr.tui(renamed, env_b, lab.dirs["projA"], lab.root / f"tui{lab.tuis}")
        )
        card_b.submit(f"card B {LS}")
        records = lab.wait_records(2)
        assert lich_b.wait(1, timeout=1) == []  # and card A got its own only (below)
    assert [r["session_id"] for r in accepted(lich_a)] == ["card-A"], accepted(lich_a)
    assert records[-1]["decision"] == "crush-server-client-unreadable", records
    assert "held by no crush process" in str(records[-1]["attribution"])
    print(f"\ncard B as cx: {records[-1]['attribution']}")
