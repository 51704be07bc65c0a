"""Two routes, one act (lich_hooks/hook/claim.py): the plugin's hook and an `install` entry
fire for one event side by side, as Claude Code runs them (tests/real_clients/
test_two_hooks.py measured it), and exactly one acts, whatever state the other route is in.

The model: the other route is one of the states its entry can be in on a real machine — it
runs; its program is deleted (`pipx uninstall`), lost its `#!` interpreter (a Python upgrade),
is a 0-byte file; its venv moved; it does not fire at all (under `"matcher": "startup"` on
/clear, in a file with `disableAllHooks`, a disabled plugin). For each, both commands run at
once, in either start order: one report per conversation, one `lich open` per Agent call.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from lich_hooks import __version__
from lich_hooks.base.homes import stamp
from lich_hooks.base.runlog import RunLog
from lich_hooks.base.safefile import Dir
from lich_hooks.hook import claim
from lich_hooks.hook.outcome import Context
from lich_hooks.human.settings import registrations
from lich_hooks.human.standin.server import StandIn
from tests.agent_cards.fake_lich import FakeLich, agent_payload, session
from tests.support.runner import LICH_HOOK, base_env, log_records, wait_for_log

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = json.loads((ROOT / "lich_hooks" / "plugin" / "claude-hooks.json").read_text())["hooks"]
SID = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c03"


def plugin_command(event: str) -> str:
    [group] = PLUGIN[event]
    [handler] = group["hooks"]
    return str(handler["command"])


def other_route(tmp: Path, state: str) -> str | None:
    """The `install` entry's command in `state`; None when the harness does not run it."""
    if state in ("not-fired",):
        return None
    folder = tmp / "venv" / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "lich-hook"
    if state == "runs":
        program = LICH_HOOK
    elif state == "interpreter-gone":
        program.write_text(f"#!{tmp}/gone/python3.11\n")
        program.chmod(0o755)
    elif state == "zero-bytes":
        program.write_text("")
        program.chmod(0o755)
    elif state == "venv-moved":
        shutil.copytree(LICH_HOOK.parent.parent, tmp / "old-venv", symlinks=True)
        program = tmp / "old-venv" / "bin" / "lich-hook"
        (tmp / "old-venv").rename(tmp / "moved-venv")
    # "deleted": the path alone
    return registrations.command(EVENT, "claude", str(program))


EVENT = "SessionStart"
STATES = ["runs", "deleted", "interpreter-gone", "zero-bytes", "venv-moved", "not-fired"]


def plugin_env(tmp: Path, **extra: str) -> dict[str, str]:
    root = tmp / "cache" / "lich-hooks" / __version__
    if not root.exists():
        shutil.copytree(
            ROOT / registrations.PLUGIN_SOURCE, root, ignore=shutil.ignore_patterns("__pycache__")
        )
    env = base_env(tmp, **extra)
    env.update(CLAUDE_PLUGIN_ROOT=str(root), PATH="/usr/local/bin:/usr/bin:/bin")
    return env


def together(commands: list[str], payload: Mapping[str, object], env: dict[str, str]) -> None:
    """Run the commands at once, as Claude Code runs two hooks for one event."""
    data = json.dumps(payload).encode()
    procs = [
        subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for command in commands
    ]
    for proc in procs:
        out, err = proc.communicate(data, timeout=60)
        assert (proc.returncode, err) == (0, b""), err
        # silence, or (an install entry that cannot start) the person's one line
        assert out == b"" or json.loads(out)["systemMessage"].startswith("lich-hooks: "), out


@pytest.mark.parametrize("order", ["plugin-first", "install-first"])
@pytest.mark.parametrize("state", STATES)
def test_one_report_per_conversation_whatever_the_other_route(
    tmp_path: Path, lich: StandIn, state: str, order: str
) -> None:
    env = plugin_env(tmp_path, **lich.env("card-1"))
    installed = other_route(tmp_path, state)
    commands = [plugin_command(EVENT)] + ([installed] if installed else [])
    if order == "install-first":
        commands.reverse()
    runs = 2 if state == "runs" else 1  # a moved venv: its `#!` names the old place
    for n, (conversation, source) in enumerate(
        [(SID, "startup"), (SID[:-1] + "4", "clear"), (SID[:-1] + "4", "compact")], start=1
    ):
        payload = {"session_id": conversation, "source": source, "hook_event_name": EVENT}
        together(commands, payload, env)
        wait_for_log(env, n * runs)
        assert len(lich.wait(n)) == n
    time.sleep(0.3)  # a second report would have arrived by now
    bodies = [r.accepted for r in lich.received]
    assert [b["provider_session_id"] for b in bodies if b] == [SID, SID[:-1] + "4", SID[:-1] + "4"]
    decisions = [r["decision"] for r in log_records(env)]
    assert decisions.count("report") == 3
    assert decisions.count("other-route-acts") == 3 * (runs - 1)


def agent_env(tmp_path: Path, lich: StandIn, fake: FakeLich) -> tuple[dict[str, str], bytes]:
    project = tmp_path / "project"
    project.mkdir()
    fake.script(open={"json": session("pending", path=str(project))})
    env = plugin_env(
        tmp_path,
        **fake.env(),
        **lich.env("card-1"),
        LICH_SUBAGENT_DEPTH="0",
        CLAUDE_CODE_SESSION_ATTENDED="1",
        CLAUDE_CODE_ENTRYPOINT="cli",
    )
    return env, json.dumps(agent_payload(project)).encode()


def at_once(commands: list[str], data: bytes, env: dict[str, str]) -> list[bytes]:
    """Each command's stdout, all run side by side (nothing on stderr)."""
    procs = [
        subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for command in commands
    ]
    outs = [proc.communicate(data, timeout=120) for proc in procs]
    assert [err for _, err in outs] == [b""] * len(procs)
    return [out for out, _ in outs]


def is_deny(stdout: bytes) -> bool:
    return b'"permissionDecision": "deny"' in stdout.replace(b'":"', b'": "')


# the `install` route as this release writes it, and as an earlier one did (another scope may hold
# it: both run the same copy of the package, one route)
INSTALLED = registrations.command("PreToolUse", "claude", str(LICH_HOOK))
EARLIER = f"{LICH_HOOK} PreToolUse claude"


@pytest.mark.parametrize("routes", ["plugin-and-install", "two-install-scopes"])
def test_an_agent_call_opens_one_card(tmp_path: Path, lich: StandIn, routes: str) -> None:
    """Two scopes' entries for one copy: before, a claim of its own route was taken for an
    earlier firing's, and the call opened two cards."""
    fake = FakeLich(tmp_path)
    env, data = agent_env(tmp_path, lich, fake)
    commands = (
        [plugin_command("PreToolUse"), INSTALLED]
        if routes == "plugin-and-install"
        else [INSTALLED, EARLIER]
    )
    outs = at_once(commands, data, env)
    opens = [argv for argv in fake.argvs() if argv[:1] == ["open"]]
    assert len(opens) == 1, fake.argvs()
    # one deny, one silence: Claude Code takes the deny (test_two_hooks.py)
    verdicts = sorted(outs)
    assert verdicts[0] == b"" and is_deny(verdicts[1])


def backdate(claims: Path, seconds: float) -> None:
    """Each claim as its run would have written it `seconds` earlier."""
    for entry in claims.iterdir():
        route, _, made = entry.read_text().partition(" ")
        entry.write_text(f"{route} {float(made) - seconds!r}")


@pytest.mark.parametrize("late", [5.5, 9.0])
def test_the_plugin_routes_run_late_opens_no_second_card(
    tmp_path: Path, lich: StandIn, late: float
) -> None:
    """The plugin route's run claims 5.5 s (9 s) after the install route's: its launcher waited
    on a hanging `python3`, or the machine was loaded. Before, a claim older than 5 s was taken
    for an earlier firing's, and the late run opened a second card for the one Agent call."""
    fake = FakeLich(tmp_path)
    env, data = agent_env(tmp_path, lich, fake)
    [first] = at_once([INSTALLED], data, env)
    assert is_deny(first)
    backdate(tmp_path / "state" / "claims", late)
    [second] = at_once([plugin_command("PreToolUse")], data, env)
    assert second == b""
    opens = [argv for argv in fake.argvs() if argv[:1] == ["open"]]
    assert len(opens) == 1, fake.argvs()
    assert [r["decision"] for r in log_records(env)][-1] == "other-route-acts"


# --- the claim itself ----------------------------------------------------------------


def context(state_dir: Path, provider: str = "claude", card: str = "card-1") -> Context:
    from lich_hooks.base import harnesses
    from lich_hooks.base.lichenv import LichEnv

    environ = {
        "LICH_HOOK_STATE_DIR": str(state_dir),
        "LICH_PORT": "4711",
        "LICH_TOKEN": "t",
        "LICH_SESSION_ID": card,
    }
    route = harnesses.route(provider, "SessionStart")
    assert route is not None
    return Context("SessionStart", provider, route, environ, LichEnv(environ), RunLog(environ))


def _race(
    state_dir: str, identity: str, route: str, start: float, results: multiprocessing.Queue[bool]
) -> None:
    from lich_hooks.hook import state

    while time.time() < start:
        pass
    ctx = context(Path(state_dir))
    directory = state.open_dir(ctx.environ, claim.PARTS, create=True)
    results.put(claim.take(directory, claim.name(ctx, identity), route, time.time()))


@pytest.mark.parametrize("stale", [False, True])
def test_of_many_racing_routes_exactly_one_acts(tmp_path: Path, stale: bool) -> None:
    """Eight routes' runs of one firing at once, for a fresh event and for one whose claim
    is an old firing's."""
    state = tmp_path / "state"
    for round in range(4):
        identity = f"conversation-{round}\nstartup"
        if stale:
            assert claim.claim(context(state), identity, now=time.time() - 3 * claim.REACH)
        results: multiprocessing.Queue[bool] = multiprocessing.Queue()
        start = time.time() + 0.5
        procs = [
            multiprocessing.Process(
                target=_race, args=(str(state), identity, f"route-{n}", start, results)
            )
            for n in range(8)
        ]
        for proc in procs:
            proc.start()
        won = [results.get(timeout=30) for _ in procs]
        for proc in procs:
            proc.join()
        assert won.count(True) == 1, (round, won)


def claims_dir(tmp_path: Path) -> Dir:
    from lich_hooks.hook import state

    return state.open_dir({"LICH_HOOK_STATE_DIR": str(tmp_path / "state")}, claim.PARTS, True)


def test_each_claim_silences_one_run_of_another_route_and_its_own_never(tmp_path: Path) -> None:
    directory = claims_dir(tmp_path)
    now, reach = time.time(), claim.REACH
    # one route alone: every firing acts, however close together
    assert all(claim.take(directory, "lone", "plugin", now + n * 0.01) for n in range(5))
    # two routes, the same identity fired again past REACH: one act per firing
    acts = [
        claim.take(directory, "s", route, now + n * 1.5 * reach)
        for n in range(3)
        for route in ("a", "b")
    ]
    assert acts == [True, False] * 3
    acts = [
        claim.take(directory, "t", route, now + n * 1.5 * reach)
        for n in range(3)
        for route in ("b", "a")
    ]
    assert acts == [True, False] * 3
    # again within REACH: a run that cannot tell its firing's claim from the last one's acts (a
    # duplicate, never none); a claim its own route's run may have answered by acting is not taken
    fired = [[claim.take(directory, "w", route, now + n * 0.4) for route in "ab"] for n in range(2)]
    assert fired == [[True, False], [True, True]]
    assert claim.take(directory, "w", "a", now + 0.8)  # its run of route b died
    # a firing whose other run died: the claim its route's earlier run took is no sibling's
    assert claim.take(directory, "v", "a", now) and not claim.take(directory, "v", "b", now)
    assert claim.take(directory, "v", "b", now + reach / 2)
    # another route's claim out of reach is another firing's
    assert claim.take(directory, "u", "a", now)
    assert claim.take(directory, "u", "b", now + reach)
    names = os.listdir(tmp_path / "state" / "claims")
    assert not [n for n in names if n.startswith(".")], names  # no temporary file left
    assert all((tmp_path / "state" / "claims" / n).stat().st_mode & 0o777 == 0o600 for n in names)


def test_a_dead_run_costs_at_most_its_own_firing(tmp_path: Path) -> None:
    """Three firings of one identity 0.6 s apart (a worker's same answer, no prompt id): the
    first's plugin run and the last's install run die. The middle's plugin run cannot tell the
    first's install claim from its own firing's, and takes it; its install run then acts. The
    last's plugin run must act: the middle's install claim is spoken for. Before, it took that
    claim (the pairing shifted one firing on) and the last firing, with a live run, was lost."""
    directory = claims_dir(tmp_path)
    now = time.time()
    acts = [
        claim.take(directory, "answer", "install", now),  # its plugin run died
        claim.take(directory, "answer", "plugin", now + 0.6),
        claim.take(directory, "answer", "install", now + 0.6),
        claim.take(directory, "answer", "plugin", now + 1.2),  # its install run died
    ]
    assert acts == [True, False, True, True]


def test_a_twin_still_being_written_counts_as_a_run_of_its_route_nearby(tmp_path: Path) -> None:
    """Two firings' install runs acted, 0.5 s apart; a plugin run is pairing with the first
    (its twin made, its time not yet in it) when the second's plugin run comes: that one cannot
    tell which firing the other is of, so it acts (two reports, never none)."""
    directory = claims_dir(tmp_path)
    now = time.time()
    assert claim.take(directory, "p", "install", now)
    assert claim.take(directory, "p", "install", now + 0.5)
    (tmp_path / "state" / "claims" / "p-plugin").write_bytes(b"")
    assert claim.take(directory, "p", "plugin", now + 0.6)


def test_a_name_that_holds_no_claim_is_passed_over(tmp_path: Path) -> None:
    directory = claims_dir(tmp_path)
    (tmp_path / "state" / "claims" / "odd").mkdir()
    now = time.time()
    assert claim.take(directory, "odd", "plugin", now)
    assert not claim.take(directory, "odd", "install", now)


# The sequence tests/registrations/test_firings.py found (the lab's research notes,
# claims/firings-counterexample.md): (seconds, identity, the routes whose run died before it
# claimed); both live runs of a firing claim at its time, the plugin's first.
COUNTEREXAMPLE = [
    (1.0, "B\nresume", ()),
    *((t, "A\nstartup", ()) for t in (1.05, 2.05, 3.05, 4.05, 5.05, 6.05)),
    (6.1, "B\nresume", ("plugin",)),
    *((t, "A\nstartup", ()) for t in (7.6, 8.6, 9.6)),
    (9.65, "B\nresume", ()),
    (10.6, "A\nstartup", ()),
    (13.6, "B\nresume", ()),
    (15.1, "B\nresume", ()),
    (16.1, "B\nresume", ("install",)),
    (16.15, "A\nstartup", ()),
]


def test_the_firing_models_counterexample_acts_once_for_every_firing(tmp_path: Path) -> None:
    """Before: /resume B's first install claim was left unpaired (its plugin run died), each
    later plugin run took the previous firing's install claim, and the last firing's lone
    plugin run was silenced by the fourth's: 10 s after the first death, no act."""
    directory = claims_dir(tmp_path)
    start = time.time()
    for at, identity, dead in COUNTEREXAMPLE:
        acts = [
            claim.take(directory, stamp(identity), route, start + at)
            for route in ("plugin", "install")
            if route not in dead
        ]
        assert acts.count(True) == 1, (at, identity, acts)


@pytest.mark.parametrize("late", [5.5, 9.0, 3600.0])
def test_a_tool_call_acts_once_however_late_its_other_run(tmp_path: Path, late: float) -> None:
    """An Agent call's `tool_use_id` never repeats: any claim before a run's is its other run's.
    Before, a claim older than 5 s was taken for an earlier firing's, and the late run acted."""
    directory = claims_dir(tmp_path)
    now = time.time()
    assert claim.take(directory, "toolu_01", "install", now, once=True)
    assert not claim.take(directory, "toolu_01", "plugin", now + late, once=True)
    # two `install` scopes running one copy (one route): one act all the same
    assert claim.take(directory, "toolu_02", "install", now, once=True)
    assert not claim.take(directory, "toolu_02", "install", now + 0.01, once=True)


def test_other_cards_and_sources_are_apart(tmp_path: Path) -> None:
    state = tmp_path / "state"
    ctx = context(state)
    assert claim.claim(ctx, "s\nstartup")
    assert claim.claim(context(state, card="card-2"), "s\nstartup")
    assert claim.claim(ctx, "s\nclear")
    assert len(os.listdir(state / "claims")) == 3
    assert (state / "claims").stat().st_mode & 0o777 == 0o700


def test_harnesses_without_a_second_route_and_unusable_state_always_act(tmp_path: Path) -> None:
    crush = context(tmp_path / "state", provider="crush")
    assert claim.claim(crush, "x") and claim.claim(crush, "x")
    assert not (tmp_path / "state" / "claims").exists()
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    ctx = context(blocked)
    assert claim.claim(ctx, "x") and claim.claim(ctx, "x")  # two reports, never none


def test_a_scrubbed_token_is_said_once_and_nothing_is_sent(tmp_path: Path, lich: StandIn) -> None:
    """Claude Code's CLAUDE_CODE_SUBPROCESS_ENV_SCRUB strips LICH_TOKEN from every hook;
    LICH_PORT and LICH_SESSION_ID stay (docs/transport.md, "A scrubbed token")."""
    env = plugin_env(tmp_path, **lich.env("card-1"), CLAUDE_CODE_SUBPROCESS_ENV_SCRUB="1")
    del env["LICH_TOKEN"]
    installed = registrations.command(EVENT, "claude", str(LICH_HOOK))
    for event, source, said in (
        ("SessionStart", "startup", 1),
        ("Stop", "startup", 0),
        ("SessionStart", "resume", 1),  # again: a new start (the same one again within a
    ):  # second could be said twice: firings of one identity within claim.REACH)
        command = plugin_command(event)
        payload = {"session_id": SID, "source": source, "hook_event_name": event}
        procs = [
            subprocess.Popen(
                ["/bin/sh", "-c", c],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            for c in (command, installed if event == EVENT else command)
        ]
        outs = [p.communicate(json.dumps(payload).encode(), timeout=60) for p in procs]
        assert [err for _, err in outs] == [b"", b""]
        lines = [json.loads(out)["systemMessage"] for out, _ in outs if out]
        assert len(lines) == said, outs
        for line in lines:
            assert "\n" not in line and "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1 is set" in line
            assert line.startswith("lich-hooks cannot report this session to lich: ")
        time.sleep(0.1)
    assert lich.received == []


def test_a_sender_that_claims_late_pairs_by_its_hook_s_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SessionStart claims in its detached sender, which may wait seconds first (Codex's
    daemon log): each route's claim carries its hook's time, so a sender 5 s later than the
    other route's is still this firing's other run, and stays silent (before: two reports)."""
    from lich_hooks.hook.jobs import session_start
    from lich_hooks.hook.payload import Payload

    runs = []
    for _ in range(2):
        ctx = context(tmp_path / "state")
        ctx._read, ctx._payload = True, Payload({"session_id": "s-1", "source": "startup"})
        outcome = session_start.run(ctx)
        assert outcome.later is not None
        runs.append(outcome.later)
    monkeypatch.setattr(claim, "route", lambda: "install-route")
    first = runs[0]()
    monkeypatch.setattr(claim, "route", lambda: "plugin-route")
    now = time.time
    monkeypatch.setattr(time, "time", lambda: now() + 5.0)  # its sender waited 5 s
    second = runs[1]()
    assert (first.decision, second.decision) == ("report", "other-route-acts")
