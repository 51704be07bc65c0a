"""How long a harness waits for `lich-hook`, and when lich has its report, as ratios
side by side in one run (the goals in docs/performance.md).

    python benchmarks/latency.py            # the full run: a minute or two, every goal judged
    python benchmarks/latency.py --quick    # CI: fewer rounds, fails only on gross regressions
    python benchmarks/latency.py --direct   # exec every command directly instead of `sh -c`

Run it with the interpreter of the environment that has lich-hooks installed:
it times the `lich-hook` next to `sys.executable`, i.e. the console script that
installer wrote, wrapper included. Use a regular (wheel) install for figures
you quote: an editable install adds setuptools' import finder to *every*
interpreter start, `python -c pass` included, which flatters the ratios; the
script says so when it sees one.

What runs, and how (the same for every row, so the ratios are fair):
  * every command is a string run with `/bin/sh -c`, the payload on stdin and
    stdout/stderr on pipes, as harnesses run their hooks. A run's time is from
    just before the spawn until the process has exited AND both pipes are
    closed: what a harness waits for. `--direct` execs the same argv without
    the shell, which removes the shell's ~1 ms from every row.
  * rows run in a new random order each round, after warm-up rounds. Each run
    of a row is paired with an adjacent run of what it is judged against
    (`python -c pass`, or the shell reference), the two in random order; the
    ratio is the median of these paired ratios, which cancels the swings of
    a shared machine's load that would move two medians taken apart. Ratios,
    never absolute times, are judged; the time columns are plain medians.
  * the lich stand-in (lich_hooks.human.standin.server.StandIn) listens on loopback
    in this process and notes when each report arrives: "lich has it" is
    spawn -> the stand-in holding the report, paired with the adjacent shell
    reference run like the waits are. After every reporting run the next run
    starts only once the stand-in has the report, so a detached sender never
    competes with the next measurement for the CPU.
  * the shell reference is written to a temp dir: POSIX sh + one jq + curl
    --max-time 1, the same POST /session-start with the same headers and the
    URL-encoded token, in the shape of lich's own plugin script (one jq call
    for the id, the encoded token and the body: the fastest honest form of
    it, so beating it is not beating a straw man).

Goals, checked at the end; the exit code is non-zero when one is missed:
  * no-op paths:     median ≤ 1.5 x  `python -c pass` on the same interpreter;
  * reporting paths: median ≤ 1.0 x  the shell reference, as the harness waits;
  * lich has it:     median ≤ 1.0 x  the shell reference, spawn -> report at lich
    (and no report later than 1 s, a guard against a sender that hangs).
`--quick` (CI) doubles every limit: it catches a gross regression, such as a
heavy import on a no-op path, without failing on a noisy machine.

The code is in two halves: `measure` builds the rows (`build_rows`: one
`Row(...)` per line of the table), checks each is what it says and times them;
`report` judges and prints. Adding a row is one `Row(...)` in build_rows.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import lich_hooks
from lich_hooks.hook import state
from lich_hooks.hook.state import prune, session_record
from lich_hooks.human.settings import registrations
from lich_hooks.human.standin.server import Received, StandIn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

BIN_DIR = Path(sys.executable).parent
LICH_HOOK = BIN_DIR / "lich-hook"
CARD = "card-bench"

NOOP_LIMIT = 1.5
GUARD_LIMIT = 0.1  # outside lich, a registered command's guard: x python -c pass ...
GUARD_FLOOR = 1.25  # ... or, where `sh` alone costs more, x lich's own guard's ratio
LICH_GUARD = '[ -n "$LICH_PORT" ] || exit 0'  # lich's own shell reporter leaves here
REPORT_LIMIT = 1.0
RECEIVED_LIMIT = 1.0  # lich has it: x the shell reference
RECEIVE_CAP = 1.0  # seconds: no report may take longer, whatever the ratios
QUICK_FACTOR = 2.0

# The shell reference. {release} and {version} are filled in; the rest is literal sh.
REFERENCE_SH = r"""#!/bin/sh
# report-session-start.sh <provider>: the sh + jq + curl reporter lich's plugin ships,
# re-created for the benchmark. Outside lich, or without an id, it does nothing.
[ -n "$LICH_PORT" ] && [ -n "$LICH_TOKEN" ] && [ -n "$LICH_SESSION_ID" ] || exit 0
case $LICH_PORT in *[!0-9]*) exit 0 ;; esac
out=$(jq -r --arg card "$LICH_SESSION_ID" --arg provider "${1:-claude}" --arg token "$LICH_TOKEN" '
  (.conversationId // .session_id // empty | strings | select(. != "")) as $id
  | ($token | @uri),
    ({session_id: $card, provider_session_id: $id, provider: $provider} | tojson)
' 2>/dev/null) || exit 0
nl='
'
token=${out%%"$nl"*}
body=${out#*"$nl"}
[ -n "$body" ] && [ "$body" != "$out" ] || exit 0
curl -s -o /dev/null --max-time 1 -X POST \
  -H 'Content-Type: application/json' \
  -H 'X-Lich-Plugin: {release}' \
  -H 'User-Agent: lich-hooks/{version}' \
  --data-binary "$body" \
  "http://127.0.0.1:$LICH_PORT/session-start?token=$token" || true
exit 0
"""

# The two console-script wrappers installers write (lich_hooks.cli:main). pip
# before 25.2 (distlib's template) imports `re` before our code runs; pip 25.2+
# and uv do not. Timed as information rows, whatever the installed one is.
WRAPPER_WITH_RE = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from lich_hooks.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""
WRAPPER_WITHOUT_RE = """#!{python}
import sys
from lich_hooks.cli import main
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit(main())
"""


SID = "5f0c1d2e-8a7b-4c3d-9e8f-0a1b2c3d4e5f"


def _payload(**fields: object) -> bytes:
    import json

    base: dict[str, object] = {
        "session_id": SID,
        "transcript_path": "/home/user/.claude/projects/-src-app/5f0c1d2e.jsonl",
        "cwd": "/src/app",
    }
    base.update(fields)
    return json.dumps(base).encode()


SESSION_START = _payload(hook_event_name="SessionStart", source="startup", model="claude")
PRE_TOOL_BASH = _payload(
    hook_event_name="PreToolUse",
    permission_mode="auto",
    tool_name="Bash",
    tool_input={"command": "git status --short", "description": "Show working tree status"},
    tool_use_id="toolu_01AbCdEfGhIjKlMnOpQrStUv",
)
CRUSH_PRE_TOOL = _payload(
    hook_event_name="PreToolUse",
    tool_name="bash",
    tool_input={"command": "ls -la"},
    session_id="crush-conversation-1",
)
STATUS_LINE = _payload(
    hook_event_name="Status",
    model={"id": "claude-opus-4", "display_name": "Opus"},
    workspace={"current_dir": "/src/app", "project_dir": "/src/app"},
)
STOP_ANSWER = _payload(
    hook_event_name="Stop",
    stop_hook_active=False,
    permission_mode="auto",
    last_assistant_message="Done. " + "The reconnect loop now backs off and gives up. " * 40,
    background_tasks=[],
)


class Row:
    """One command the benchmark times, and what it is judged against.

    To add a row, add one `Row(...)` to build_rows: a key, a label, a kind, the
    command line, its stdin payload, its environment and, for a hook, the
    decision it must log. `setup` (optional) runs once before the row is
    probed, to put it in the state its label names (see `_reported_first`).
    """

    def __init__(
        self,
        key: str,
        label: str,
        kind: str,
        command: str,
        payload: bytes,
        env: dict[str, str],
        expect: str | None = None,
        setup: Callable[[Bench, Row], None] | None = None,
    ) -> None:
        self.key = key
        self.label = label
        self.kind = kind  # baseline | guard | noop | report | reference | info
        self.command = command
        self.payload = payload
        self.env = env
        self.expect = expect  # the decision our hook must log under LICH_HOOK_DEBUG
        self.setup = setup
        self.sends = kind in ("report", "reference")
        self.waits: list[float] = []  # spawn -> exited, pipes closed (what a harness waits)
        self.receives: list[float] = []  # spawn -> the stand-in holds the report
        self.ratios: list[float] = []  # each wait / the adjacent run it is judged against
        self.receive_ratios: list[float] = []  # each receive / the adjacent reference's
        self.errors: list[str] = []


class Bench:
    """Runs rows the way a harness does, against the stand-in it owns."""

    def __init__(self, tmp: Path, direct: bool) -> None:
        self.tmp = tmp
        self.direct = direct
        self._arrived = threading.Condition()
        self._arrivals: list[tuple[float, Received]] = []
        self.lich = StandIn(on_request=self.on_request)
        self.runs = 0  # reporting runs so far: each reports a conversation of its own

    def on_request(self, received: Received) -> None:
        with self._arrived:
            self._arrivals.append((time.perf_counter(), received))
            self._arrived.notify_all()

    def argv(self, command: str) -> list[str]:
        return shlex.split(command) if self.direct else ["/bin/sh", "-c", command]

    def run(
        self, row: Row, env: dict[str, str] | None = None, wait: bool = True
    ) -> tuple[float, float | None, bytes, bytes, int]:
        """One run of `row`: (waited, received, stdout, stderr, exit code).

        `waited` is what a harness waits for; `received`, when the row sends
        and `wait` is set, is spawn -> the stand-in holding the report (None if
        it never came). The next run starts only once the report is in, so a
        detached sender never competes with the next measurement for the CPU.
        """
        with self._arrived:
            seen = len(self._arrivals)
        payload = row.payload
        if row.kind == "report":
            # a conversation of its own each run: the same one twice within seconds is one
            # firing, which two routes claim once (lich_hooks/hook/claim.py)
            self.runs += 1
            payload = payload.replace(SID.encode(), f"{SID[:-8]}{self.runs:08x}".encode())
        started = time.perf_counter()
        proc = subprocess.Popen(
            self.argv(row.command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=row.env if env is None else env,
            cwd=self.tmp,
        )
        out, err = proc.communicate(payload, timeout=30)
        waited = time.perf_counter() - started
        received = None
        if row.sends and wait:
            with self._arrived:
                self._arrived.wait_for(lambda: len(self._arrivals) > seen, timeout=5.0)
                arrivals = self._arrivals[seen:]
            if not arrivals:
                row.errors.append("lich never received the report")
            else:
                at, request = arrivals[0]
                if request.status != 204:
                    row.errors.append(f"lich answered {request.status}: {request.reason}")
                received = at - started
        return waited, received, out, err, proc.returncode

    def measure(self, row: Row) -> float | None:
        """Time one run into `row`; returns when lich had its report (None: no report)."""
        waited, received, out, err, code = self.run(row)
        row.waits.append(waited)
        if received is not None:
            row.receives.append(received)
        if code != 0 or out or err:
            row.errors.append(f"exit {code}, stdout {out[:80]!r}, stderr {err[:80]!r}")
        return received

    def probe(self, row: Row) -> tuple[str, Received | None]:
        """What our hook decides for this row (its LICH_HOOK_DEBUG line), and whether
        lich then gets a report: judged by what arrives, not by the decision's wording."""
        with self._arrived:
            seen = len(self._arrivals)
        err = self.run(row, env={**row.env, "LICH_HOOK_DEBUG": "1"}, wait=False)[3]
        args = row.command.split(maxsplit=1)[1]  # "<event> <provider>", canonical spellings
        decision = f"(no decision line: {err[:120]!r})"
        for line in err.decode(errors="replace").splitlines():
            if line.startswith(f"lich-hook: {args}: "):
                decision = line.rpartition(": ")[2].strip()
        with self._arrived:
            if row.sends:  # a detached sender needs a moment: wait for it
                self._arrived.wait_for(lambda: len(self._arrivals) > seen, timeout=5.0)
            arrived = self._arrivals[seen:]
        return decision, arrived[0][1] if arrived else None

    def arrivals(self) -> int:
        with self._arrived:
            return len(self._arrivals)

    def settle(self, expected: int, seconds: float) -> int:
        """Arrivals after giving a stray report `seconds` to show up beyond `expected`."""
        with self._arrived:
            self._arrived.wait_for(lambda: len(self._arrivals) > expected, timeout=seconds)
            return len(self._arrivals)


def _reported_first(bench: Bench, row: Row) -> None:
    """Crush reports its first tool call; the sender records the id after lich's 204."""
    row.sends = True
    bench.run(row)
    deadline = time.monotonic() + 5
    card = row.env["LICH_SESSION_ID"]
    while session_record.last_reported(row.env, card) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    row.sends = False


PLUGIN_ROOT = Path(lich_hooks.__file__).parent  # the folder a plugin added from a clone runs


def plugin_command(event: str) -> str:
    """The plugin route's registered command for `event`, as the shipped file has it."""
    import json

    hooks = json.loads((PLUGIN_ROOT / "plugin" / "claude-hooks.json").read_text())["hooks"]
    command = hooks[event][0]["hooks"][0]["command"]
    assert isinstance(command, str)
    return command


def build_rows(tmp: Path, lich: StandIn, reference: Path | None) -> list[Row]:
    """Every row, `python -c pass` first (the baseline the no-op rows are judged against)."""
    python = shlex.quote(sys.executable)
    hook = shlex.quote(str(LICH_HOOK))
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    outside = {
        "PATH": f"{BIN_DIR}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "LICH_HOOK_STATE_DIR": str(tmp / "state"),
        "LANG": "C.UTF-8",
    }
    inside = {**outside, **lich.env(CARD)}
    # Its own card: every SessionStart row reports in CARD, and a Crush call
    # after another harness's report in its card rightly reports again.
    crush_card = {**outside, **lich.env(CARD + "-crush")}
    claude = {**inside, "CLAUDE_CODE_SESSION_ATTENDED": "1", "CLAUDE_CODE_ENTRYPOINT": "cli"}
    main_loop = {**claude, "LICH_SUBAGENT_DEPTH": "0"}
    worker = {**claude, "LICH_SUBAGENT_DEPTH": "1"}

    with_re = tmp / "wrapper-with-re"
    without_re = tmp / "wrapper-without-re"
    for path, template in ((with_re, WRAPPER_WITH_RE), (without_re, WRAPPER_WITHOUT_RE)):
        path.write_text(template.format(python=sys.executable))
        path.chmod(0o755)

    rows = [
        Row("pass", "python -c pass", "baseline", f"{python} -c pass", b"", outside),
        Row(
            "outside",
            "outside lich (crush PreToolUse)",
            "noop",
            f"{hook} PreToolUse crush",
            CRUSH_PRE_TOOL,
            outside,
            "outside-lich",
        ),
        Row(
            "crush",
            "crush PreToolUse after first report",
            "noop",
            f"{hook} PreToolUse crush",
            CRUSH_PRE_TOOL,
            crush_card,
            "already-reported",
            setup=_reported_first,
        ),
        Row(
            "stop",
            "claude Stop, not a worker",
            "noop",
            f"{hook} Stop claude",
            STOP_ANSWER,
            main_loop,
        ),
        Row(
            "bash",
            "claude PreToolUse, tool Bash",
            "noop",
            f"{hook} PreToolUse claude",
            PRE_TOOL_BASH,
            main_loop,
        ),
        Row(
            "status",
            "claude status-line, no workers",
            "noop",
            f"{hook} status-line",
            STATUS_LINE,
            {**main_loop, "LICH_BIN": "/bin/false"},
        ),
        Row(
            "start",
            "claude SessionStart (reports)",
            "report",
            f"{hook} SessionStart claude",
            SESSION_START,
            claude,
        ),
        Row(
            "worker",
            "claude worker Stop (reports)",
            "report",
            f"{hook} Stop claude",
            STOP_ANSWER,
            worker,
        ),
        # Outside lich, each registered Claude Code command as the harness runs it: the guard
        # (settings/commandline.py) leaves in the harness's own sh, starting nothing.
        *(
            Row(
                f"guard-{event}",
                f"registered, outside lich (claude {event})",
                "guard",
                registrations.command(event, "claude", str(LICH_HOOK)),
                STOP_ANSWER if event == "Stop" else SESSION_START,
                outside,
            )
            for event in ("SessionStart", "Stop", "PreToolUse")
        ),
        # What `sh -c` costs with nothing to run: lich's own reporter's guard, outside lich, with
        # the payload on stdin as the harness gives every hook (writing it costs the writer ~1 ms
        # of its own: an empty stdin made this floor look cheaper than the guards it judges).
        Row(
            "lich-guard", "lich's own guard, outside lich", "info", LICH_GUARD, STOP_ANSWER, outside
        ),
        # The plugin route: the shipped command (its launcher probes a Python, then runs
        # the plugin's copy isolated), the package folder as CLAUDE_PLUGIN_ROOT.
        Row(
            "plugin-outside",
            "plugin: outside lich (claude Stop)",
            "guard",
            plugin_command("Stop"),
            STOP_ANSWER,
            {**outside, "CLAUDE_PLUGIN_ROOT": str(PLUGIN_ROOT)},
        ),
        Row(
            "plugin-stop",
            "plugin: claude Stop, not a worker",
            "noop",
            plugin_command("Stop"),
            STOP_ANSWER,
            {**main_loop, "CLAUDE_PLUGIN_ROOT": str(PLUGIN_ROOT)},
        ),
        Row(
            "plugin-start",
            "plugin: claude SessionStart (reports)",
            "report",
            plugin_command("SessionStart"),
            SESSION_START,
            {**claude, "CLAUDE_PLUGIN_ROOT": str(PLUGIN_ROOT)},
        ),
        Row(
            "re",
            "info: outside lich, pip<25.2 wrapper",
            "info",
            f"{shlex.quote(str(with_re))} PreToolUse crush",
            CRUSH_PRE_TOOL,
            outside,
        ),
        Row(
            "nore",
            "info: outside lich, pip>=25.2 or uv wrapper",
            "info",
            f"{shlex.quote(str(without_re))} PreToolUse crush",
            CRUSH_PRE_TOOL,
            outside,
        ),
    ]
    if reference is not None:
        rows.append(
            Row(
                "reference",
                "shell reference (sh+jq+curl)",
                "reference",
                f"{shlex.quote(str(reference))} claude",
                SESSION_START,
                claude,
            )
        )
    return rows


def prepare(bench: Bench, rows: list[Row]) -> None:
    """Put every row in the state it is named after, and check it is there."""
    for row in rows:
        if row.setup is not None:
            row.setup(bench, row)
            row.receives.clear()
    sent: dict[str, Received] = {}
    for row in rows:
        if row.expect is None and not row.sends:
            continue
        decision, received = bench.probe(row)
        if received is not None:
            sent[row.key] = received
        if row.sends and received is None:
            row.errors.append(f"decided {decision!r} and lich got no report")
        elif row.expect is not None and decision != row.expect:
            row.errors.append(f"decided {decision!r}, expected {row.expect!r}")
        row.receives.clear()
    # A fair race: the reference must make the very request our SessionStart makes.
    # (the conversation id aside: each of our runs reports one of its own).
    ours, theirs = sent.get("start"), sent.get("reference")
    if ours is not None and theirs is not None:
        same = ("content-type", "x-lich-plugin", "user-agent")

        def body(received: Received) -> object:
            accepted = received.accepted
            if isinstance(accepted, dict):
                return {k: v for k, v in accepted.items() if k != "provider_session_id"}
            return accepted

        if (theirs.status, theirs.endpoint, body(theirs)) != (
            ours.status,
            ours.endpoint,
            body(ours),
        ) or any(theirs.headers.get(h) != ours.headers.get(h) for h in same):
            by_key = {row.key: row for row in rows}
            by_key["reference"].errors.append(
                "the reference's request differs from ours (status, body or headers): "
                f"{theirs.summary()} vs {ours.summary()}"
            )


def seed_stale(root: Path, count: int) -> None:
    """`count` records two months old in the rows' state directory: what a
    user's would hold without pruning after months of cards and workers. The
    no-op rows are timed with them present (pruning runs only where a record is
    written, at most hourly: it must not cost those rows anything)."""
    old = time.time() - 60 * 86400
    for i in range(count):
        if i % 2:
            path = root / "reported" / f"stale-card-{i:06d}"
        else:
            path = root / "workers" / f"stale-card-{i // 20:05d}" / f"w-{i:06d}.json"
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_bytes(b'{"name": "w"}' if i % 2 == 0 else b"crush\nstale")
        os.utime(path, (old, old))


def stale_left(root: Path) -> int:
    return sum(
        1
        for where in ("reported", "workers")
        for _, _, names in os.walk(root / where)
        for name in names
        if "stale" in name or name.startswith("w-")
    )


def time_prune(tmp: Path, count: int) -> tuple[float, int]:
    """One prune of `count` stale records, in the detached sender's place (ms, removed)."""
    root = tmp / "prune-bench"
    seed_stale(root, count)
    started = time.perf_counter()
    handle = state.open_root({"LICH_HOOK_STATE_DIR": str(root)}, create=False)
    try:
        removed = prune.prune(handle, time.time())
    finally:
        handle.close()
    return (time.perf_counter() - started) * 1000, removed


def install_kind() -> list[str]:
    """What about this installation changes the figures, said up front."""
    notes: list[str] = []
    try:
        wrapper = LICH_HOOK.read_text(errors="replace")
    except OSError:
        wrapper = ""
    if "import re" in wrapper:
        notes.append(
            f"{LICH_HOOK} imports re before lich_hooks (pip older than 25.2): "
            "every hook pays for it; reinstall with pip >= 25.2 or uv (docs/performance.md)"
        )
    editable = [
        name
        for directory in site.getsitepackages()
        if os.path.isdir(directory)
        for name in os.listdir(directory)
        if name.startswith("__editable__") and name.endswith(".pth")
    ]
    if editable:
        notes.append(
            "editable install: setuptools' finder runs at every interpreter start, "
            "python -c pass included, which flatters the ratios; quote figures from a "
            "wheel install (docs/performance.md)"
        )
    return notes


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- measuring ---------------------------------------------------------------------


class Stale:
    """The stale records seeded into the state directory while the rows were timed."""

    def __init__(self, seeded: int, left: int, prune_ms: float, pruned: int) -> None:
        self.seeded = seeded
        self.left = left  # still there after the run: no no-op row pruned (or paid for it)
        self.prune_ms = prune_ms  # one prune of them all, as the sender would run it
        self.pruned = pruned


class Measured:
    """What a run of the benchmark produced, before anything is judged or printed."""

    def __init__(
        self, rows: list[Row], missing: list[str], stray_reports: bool, stale: Stale
    ) -> None:
        self.rows = rows
        self.missing = missing  # jq, curl: without them there is no shell reference
        self.stray_reports = stray_reports  # a row timed as a no-op sent a report
        self.stale = stale

    @property
    def reference(self) -> Row | None:
        return next((row for row in self.rows if row.kind == "reference"), None)


def measure(rounds: int, direct: bool, seed: int | None, stale: int) -> Measured:
    """Build the rows, check each is what it says, then time `rounds` interleaved rounds."""
    missing = [tool for tool in ("jq", "curl") if shutil.which(tool) is None]
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="lich-bench-") as name:
        tmp = Path(name)
        reference: Path | None = None
        if not missing:
            reference = tmp / "report-session-start.sh"
            reference.write_text(
                REFERENCE_SH.replace("{version}", lich_hooks.__version__).replace(
                    "{release}", lich_hooks.PLUGIN_RELEASE
                )
            )
            reference.chmod(0o755)
        bench = Bench(tmp, direct)
        with bench.lich:
            rows = build_rows(tmp, bench.lich, reference)
            if direct:  # a guard is shell syntax: only `sh -c` runs it
                rows = [row for row in rows if row.kind != "guard" and row.key != "lich-guard"]
            prepare(bench, rows)
            if stale:
                seed_stale(tmp / "state", stale)
            for _ in range(3):  # warm-up: page cache, pyc files, the stand-in's threads
                for row in rows:
                    bench.run(row)
            before = bench.arrivals()
            _rounds(bench, rows, rounds, rng)
            expected = before + sum(len(row.receives) for row in rows)
            stray = bench.settle(expected, 0.5) != expected
            left = stale_left(tmp / "state") if stale else 0
            prune = time_prune(tmp, stale) if stale else (0.0, 0)
    return Measured(rows, missing, stray, Stale(stale, left, *prune))


def _rounds(bench: Bench, rows: list[Row], rounds: int, rng: random.Random) -> None:
    """Each round runs every row once, in a new random order, each run paired with an
    adjacent run of what it is judged against (the two in random order)."""
    base = rows[0]
    ref = next((row for row in rows if row.kind == "reference"), None)
    for _ in range(rounds):
        order = rows[1:]
        rng.shuffle(order)
        for row in order:
            against = ref if row.kind == "report" and ref is not None else base
            pair = [against, row]
            rng.shuffle(pair)
            received = {id(one): bench.measure(one) for one in pair}
            row.ratios.append(row.waits[-1] / against.waits[-1])
            ours, theirs = received[id(row)], received[id(against)]
            if against is ref and ours is not None and theirs is not None:
                row.receive_ratios.append(ours / theirs)


# --- judging and printing ----------------------------------------------------------


class Line:
    """One printed row: times, the ratio and the goal it is judged by, if any."""

    def __init__(
        self,
        label: str,
        samples: list[float],
        ratios: list[float] | None = None,
        against: str = "",
        limit: float | None = None,
    ) -> None:
        self.label = label
        self.samples = samples
        self.ratio = statistics.median(ratios) if ratios else None
        self.against = against  # "py" (python -c pass) or "sh" (the shell reference)
        self.limit = limit
        self.failures: list[str] = []
        if limit is not None and self.ratio is not None and self.ratio > limit:
            what = "python -c pass" if against == "py" else "shell reference"
            self.failures.append(f"{label}: {self.ratio:.2f} x {what} > {limit:g}")

    def text(self) -> str:
        median = statistics.median(self.samples) * 1000 if self.samples else 0.0
        p90 = quantile(self.samples, 0.9) * 1000 if self.samples else 0.0
        ratio = f"{self.ratio:5.2f} x {self.against}" if self.ratio is not None else ""
        goal = f"≤ {self.limit:g}" if self.limit is not None else ""
        verdict = ("MISSED" if self.failures else "ok") if self.limit is not None else ""
        line = f"{self.label:44} {median:6.1f}ms {p90:6.1f}ms {ratio:>11} {goal:>7}  {verdict}"
        return line.rstrip()


def lines(measured: Measured, factor: float) -> list[Line]:
    """The table: every row as the harness waits for it, then when lich has each report."""
    ref = measured.reference
    table: list[Line] = []
    # sh's own start is the floor of any registered command: where it alone costs more than
    # GUARD_LIMIT, a guard is held to lich's own guard line instead (it must not cost more).
    floor = [row for row in measured.rows if row.key == "lich-guard" and row.ratios]
    guard_limit = GUARD_LIMIT
    if floor:
        guard_limit = round(max(GUARD_LIMIT, GUARD_FLOOR * statistics.median(floor[0].ratios)), 2)
    for row in measured.rows:
        if row.kind == "noop":
            table.append(Line(row.label, row.waits, row.ratios, "py", NOOP_LIMIT * factor))
        elif row.kind == "guard":
            table.append(Line(row.label, row.waits, row.ratios, "py", guard_limit * factor))
        elif row.kind == "report" and ref is not None:
            table.append(Line(row.label, row.waits, row.ratios, "sh", REPORT_LIMIT * factor))
        elif row.kind == "baseline":
            table.append(Line(row.label, row.waits))
        else:  # info, reference, or a report with no reference to judge it by
            table.append(Line(row.label, row.waits, row.ratios, "py"))
    for row in measured.rows:
        if row.kind not in ("report", "reference") or not row.receives:
            continue
        label = "lich has it: " + row.label.removesuffix(" (reports)")
        if row.kind == "report" and ref is not None:
            line = Line(label, row.receives, row.receive_ratios, "sh", RECEIVED_LIMIT * factor)
        else:
            line = Line(label, row.receives)
        worst = max(row.receives)
        if row.kind == "report" and worst > RECEIVE_CAP * factor:
            line.failures.append(f"{label}: one report reached lich only after {worst:.2f} s")
        table.append(line)
    return table


def report(measured: Measured, quick: bool, direct: bool, rounds: int) -> int:
    """Print the table and every failure; the exit code says whether every goal holds."""
    mode = "direct exec" if direct else "sh -c"
    print(
        f"lich-hook latency: {rounds} interleaved rounds, {mode}, payload on stdin, "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
        + (" (quick: limits x2)" if quick else "")
    )
    for note in install_kind():
        print(f"note: {note}")
    if measured.missing:
        print(
            f"note: {' and '.join(measured.missing)} not found: no shell reference, "
            "reporting rows unjudged"
        )
    stale = measured.stale
    if stale.seeded:
        print(
            f"state: {stale.seeded} stale records seeded beside the rows' records, {stale.left} "
            f"still there after the run (pruning is hourly and only where a record is written); "
            f"one prune of {stale.seeded} took {stale.prune_ms:.0f} ms in the sender "
            f"({stale.pruned} removed)"
        )
    print()
    header = f"{'path':44} {'median':>8} {'p90':>8} {'ratio':>11} {'goal':>7}"
    print(header)
    print("-" * (len(header) + 8))
    failures: list[str] = []
    for line in lines(measured, QUICK_FACTOR if quick else 1.0):
        print(line.text())
        failures += line.failures
    for row in measured.rows:
        failures += [f"{row.label}: {error}" for error in sorted(set(row.errors))[:3]]
    if measured.stray_reports:
        failures.append("a row timed as a no-op sent reports to lich")
    if stale.seeded and stale.left != stale.seeded:
        failures.append(f"the stale records were pruned during the run ({stale.left} left)")
    print()
    print(
        "ratio: median over the rounds of (this run / the adjacent run of `python -c pass` (x py)"
        " or of the shell reference (x sh)); a row's time is spawn -> exited with its pipes"
        " closed (what the harness waits for); lich has it: spawn -> the stand-in holding the"
        " report."
    )
    if failures:
        print()
        for failure in failures:
            print(f"FAILED {failure}")
        return 1
    print("every goal holds")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI mode: fewer rounds, 2x limits")
    parser.add_argument("--direct", action="store_true", help="exec commands without sh -c")
    parser.add_argument("--rounds", type=int, help="measured rounds (default 100, quick 25)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the run order")
    parser.add_argument(
        "--stale",
        type=int,
        default=10_000,
        help="stale records in the state directory while timing (default 10000; 0: none)",
    )
    args = parser.parse_args(argv)
    rounds = args.rounds or (25 if args.quick else 100)
    if os.name == "nt":
        print("latency.py times POSIX harness invocations (sh -c); it does not run on Windows")
        return 0
    if not LICH_HOOK.exists():
        print(f"{LICH_HOOK} is missing: install lich-hooks into this environment first")
        return 2
    measured = measure(rounds, args.direct, args.seed, args.stale)
    return report(measured, args.quick, args.direct, rounds)


if __name__ == "__main__":
    sys.exit(main())
