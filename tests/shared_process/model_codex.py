"""A pure model of Codex's shared app-server daemon and the TUIs of several cards.

The assumption the proof cannot check: nobody of the same user forges a row of the
daemon's log (CODEX_HOME/logs_2.sqlite). Any process of the user can write every field
of a row, so a same-user program that wants a conversation on another card can put it
there; the hook checks only that no other user can (evidence.trusted: the log, its -wal
and -shm and CODEX_HOME the user's own, writable by nobody else, no symlink, an absolute
CODEX_HOME), as it trusts its own state directory. The cost: a same-user process that
writes rows (or runs a client that lies about what it is) can move a report to a card of
its choosing, which it could do anyway by writing lich's own state.

It holds the ground truth (which TUI, of which card, runs which conversation
where) and emits exactly what the probe (lich_hooks/hook/shared/codex/probe.py)
observes at a SessionStart: the connected clients with their argv, cwd,
LICH_* and start time, the connections no client read, and the payload; and
what the daemon's log holds when the sender reads it. The real decisions run
on that, `decide.gate` at the hook and `decide.from_evidence` in the sender;
nothing of them is mocked.

Calibrated against real Codex 0.171.0 (tests/real_clients/test_codex_daemon.py
drives these with two TUIs on pseudo-terminals):
- one daemon per CODEX_HOME, every TUI a client; the TUI's process cwd and
  argv never change, whatever it resumes;
- SessionStart fires once per conversation, when its first turn starts
  (`startup` for a new TUI or `/new`, `clear` for `/clear`, `resume` for a
  resumed session), with the conversation's directory as `cwd`;
- a resume asks "session directory or current directory?";
- a TUI may resume the session another connected TUI still shows (0.171.0
  accepts it: "overrides ignored for loaded thread"): two TUIs on one thread.
Assumptions (where the model is wider than what was seen, so the proof holds
for every choice):
- "current directory" is either the TUI's own or the one its conversation
  moved to; `/fork`'s SessionStart source is `startup` or `resume`, and its
  rollout is written at once, in the conversation's directory;
- a hook may not run at all (timed out, failed, untrusted): the conversation
  goes on with no record;
- a TUI's environment may be unreadable; a client may be one the probe cannot
  read at all (started as `cx` or under the release's download name, another
  user's, non-dumpable, or too many open files): the probe sees only that one
  of the daemon's connections is held by no client it read (`unaccounted`,
  measured on 0.171.0: every accepted connection carries the listener's name,
  the daemon's own socket pair does not);
- a TUI is still connected while its own SessionStart hook probes (a TUI
  that quits within those milliseconds is not modelled).
The daemon's log (decide.from_evidence; calibrated on 0.171.0, tests/real_clients):
- the daemon logs every thread/start, /resume, /fork with the request's connection
  id on a row carrying the thread id; connection ids count accepts and restart at
  0 with a new daemon; a TUI keeps one connection for the daemon's life and, after
  a restart, reconnects with a new one and sends no startup request;
- a TUI logs `connected app-server platform` under its pid when it first connects
  (drawn here 0.3-12 s after its start; measured 0.62-1.54 s, 4.2-8.5 s on a first
  start), never on a reconnect. Before that the daemon logs `initialize` for its two
  probes (nothing more on them) and for its session's connection, opened anywhere in
  between (drawn), which asks something (`account/read`) before the TUI logs its connect
  (it waits for the answer); the connection's first thread request follows the connect
  (`late`: 0.02 s here, measured 0.01-0.26 s, later when stalled): a plain TUI's
  `thread/start` id `startup-thread-start-<uuid>`, `codex resume <id>`'s resume of that
  thread, `codex fork`'s fork; `queue` and raw clients open one connection, logged as it
  is taken, and ask at once;
- the daemon keeps its newest KEPT rows without a thread and drops the oldest when it
  writes (Codex's source); a TUI's start, a turn, `/new`, a resume and a queued client
  write that many (ROWS, measured on 0.171.0 with a scripted model), threads' rows are
  kept (1,000 per thread: not reached here);
- a startup thread's tasks log in its startup request's span when it unloads (a late
  row with no thread, measured a minute after it went idle): no request line, so no window
  counts it;
- rows become readable in batches, in time order, at any moment (`flush`); a row
  follows each hook (its turn); a waiting sender makes the daemon log a request of its own
  (nudge.py: one more accepted connection, a row with no thread) once the clock is past
  the moment it needs a row after, and no other hook's probe counts that connection
  (nudge.ours recognises it); a resume's thread row may come up to 0.15 s
  after the hook it sets off (the sender waits for it); rows are never dropped (unverified: Codex's
  writer drops rows when its queue is full); nobody forges a row;
- a client may start or resume a thread, run its turn and leave before the
  hook (`codex queue --resume`, a raw client, a TUI that quits); the daemon
  restarts at any moment (its pending hooks then find it gone: refused);
- the daemon runs before any TUI here (a TUI spawning it connects after its
  start, which is all decide.tie asks);
- a sender remembers each tie it proves for the daemon's life (codex.ties: the state
  directory, trusted as the hook's own), and every later sender reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lich_hooks.hook.shared.codex import decide
from lich_hooks.hook.shared.codex.decide import CONNECT_WITHIN, REQUEST_SPAN
from lich_hooks.hook.shared.codex.evidence import REQUEST_AFTER, SETTLE

KEPT = 1000  # rows without a thread Codex keeps per process
# rows without a thread the daemon writes for each (0.171.0, a scripted model: a TUI's start
# 87-118, a turn 77-112, `/new` 35; a model that calls tools writes more per turn)
ROWS = {"start": 100, "turn": 90, "new": 35, "resume": 30, "departed": 60}

DIRS = ("/w/p0", "/w/p1", "/w/p2")
CARDS = ("card-A", "card-B", "card-C")


def lich_of(card: str | None) -> dict[str, str]:
    """A card's LICH_* (each card its own lich: port and token differ); {} outside lich."""
    if card is None:
        return {}
    n = CARDS.index(card)
    return {"LICH_SESSION_ID": card, "LICH_PORT": str(4700 + n), "LICH_TOKEN": f"tok-{card}-xxxx"}


@dataclass
class Tui:
    pid: int
    started: float
    card: str | None  # None: a TUI outside lich
    cwd: str
    argv: list[str]
    env_readable: bool = True
    visible: bool = True  # False: a process the probe cannot read (name, user, fds)
    connected: bool = True
    thread: str = ""
    conv_dir: str = ""  # where its conversation (and the next one) runs
    pending: str | None = None  # the source of the SessionStart its next turn fires
    conn: int = -1  # its connection to the daemon
    ready: float = 0.0  # when it sent its first request
    connected_at: float = float("inf")  # when it logged `connected app-server platform`


@dataclass
class Thread:
    sid: str
    owner: int  # pid of the TUI that started it
    recorded: str | None = None  # session_meta's cwd, once its rollout exists
    shown: set[int] = field(default_factory=set)  # pids of connected TUIs showing it
    startup: tuple[int, int] | None = None  # (life, connection) of the startup request made it


@dataclass
class Row:
    """One row of the daemon's log: a thread request (`startup`: a TUI's first)."""

    ts: float
    method: str
    conn: int
    thread: str | None
    life: int  # which daemon wrote it
    startup: bool = False
    req: int = 0  # the request's id: its begun row (no thread) and its thread's rows share it
    weight: int = 1  # rows it stands for (the daemon's other rows without a thread)
    gone: bool = False  # dropped by Codex (KEPT)


@dataclass
class Hook:
    """A SessionStart whose sender waits for the daemon's log: what the hook read."""

    event: Event
    at: float
    clients: list[decide.Client]
    asked: float = float("-inf")  # when its sender's last request was logged (nudge.py)


@dataclass
class Event:
    """One SessionStart: what the hook saw, what it decided, and the truth."""

    tui: Tui
    source: str
    session: str
    cwd: str
    truth: dict[str, str]  # the firing TUI's LICH_* ({} outside lich)
    found: decide.Attribution | None  # None: the hook did not run

    @property
    def named(self) -> dict[str, str] | None:
        return None if self.found is None else dict(self.found.lich or {}) or None

    @property
    def wrong(self) -> bool:
        named = self.named
        return named is not None and named != self.truth


class Daemon:
    """The daemon, its TUIs and their conversations, and the record the hooks keep."""

    def __init__(self) -> None:
        self.tuis: list[Tui] = []
        self.threads: dict[str, Thread] = {}
        self.events: list[Event] = []
        self._pid = 1000
        self.now = 5000.0
        self._sid = 0
        self.rows: list[Row] = []
        self.flushed = 0.0  # rows up to this time are readable
        self.hooks: list[Hook] = []  # senders still waiting
        self.life = 0
        self.since = self.now - 1  # the daemon's start (before any TUI: see the top)
        self.accepted = 0
        self.departing = False
        self._req = 0
        self.remembered: dict[tuple[int, int, float], int] = {}  # (life, pid, connect): codex.ties
        self._filler(1, self.since)  # the daemon's own first row

    # --- helpers ---------------------------------------------------------------------------

    def _new_sid(self) -> str:
        self._sid += 1
        return f"019a0000-0000-7000-8000-{self._sid:012d}"

    def connected(self) -> list[Tui]:
        return [t for t in self.tuis if t.connected]

    def resumable(self, by: Tui | None = None) -> list[str]:
        """Sessions with a rollout (another TUI may be showing it), but `by`'s own."""
        return [
            s.sid
            for s in self.threads.values()
            if s.recorded is not None and (by is None or s.sid != by.thread)
        ]

    def _leave(self, tui: Tui) -> None:
        if tui.thread in self.threads:
            self.threads[tui.thread].shown.discard(tui.pid)

    def _show(self, tui: Tui, sid: str) -> None:
        self._leave(tui)
        tui.thread = sid
        self.threads[sid].shown.add(tui.pid)

    def _fresh(self, tui: Tui, source: str, at: float | None = None, startup: bool = False) -> None:
        sid = self._new_sid()
        self.threads[sid] = Thread(sid, tui.pid)
        self._show(tui, sid)
        tui.pending = source
        self._log("thread/start", tui.conn, sid, at, startup)

    def _log(
        self,
        method: str,
        conn: int,
        thread: str | None,
        at: float | None = None,
        startup: bool = False,
    ) -> None:
        """A row; a thread request's first is logged as it begins (`now` for a departed
        client's, whose thread row comes later), with no thread id yet."""
        ts = self.now if at is None else at
        self._req += 1
        if method.startswith("thread/"):
            begun = self.now if self.departing else ts
            self.rows.append(Row(begun, method, conn, None, self.life, startup, self._req))
        self.rows.append(Row(ts, method, conn, thread, self.life, startup, self._req))

    def _filler(self, what: int | str, at: float | None = None) -> None:
        weight = what if isinstance(what, int) else ROWS[what]
        self.rows.append(
            Row(self.now if at is None else at, "", -1, None, self.life, weight=weight)
        )

    def _connect(self, born: float, asked: float, probes: int = 2) -> int:
        """Connections the daemon takes: each logs `initialize`; the last one (the session's)
        asks something at `asked`."""
        for _ in range(probes + 1):
            self.rows.append(Row(born, "initialize", self.accepted, None, self.life))
            self.accepted += 1
        self.rows.append(Row(asked, "account/read", self.accepted - 1, None, self.life))
        return self.accepted - 1

    def _ask(self, hook: Hook, after: float) -> None:
        """A waiting sender's request (evidence.settle): once per moment it needs a row after,
        logged when the clock is past that moment (and past the hook's REQUEST_AFTER), on a
        connection of its own that no thread request names."""
        if hook.asked > after or self.now <= max(after, hook.at + REQUEST_AFTER):
            return
        self.accepted += 1
        at = self.now + 1e-6  # logged after any write at this moment: readable with the next
        self.rows.append(Row(at, "initialize", self.accepted - 1, None, self.life))
        hook.asked = at

    # --- actions ---------------------------------------------------------------------------

    def start(
        self,
        card: str | None,
        cwd: str,
        cd: str | None = None,
        resume: str | None = None,
        session_dir: bool = True,
        named: bool = True,
        fork: bool = False,
        env_readable: bool = True,
        visible: bool = True,
        gap: float = 1.0,
        late: float = 0.02,
        opens: float = 0.7,
    ) -> Tui:
        """A new TUI: `codex [-C cd]`, or `codex resume|fork <id>|--last` (`named` False); its
        connect `gap` seconds after its start, its session's connection opened `opens` of the
        way there, its first thread request `late` after its connect."""
        self._pid += 7
        argv = ["codex"]
        if cd is not None:
            argv += ["-C", cd]
        if resume is not None:
            argv += ["fork" if fork else "resume", resume if named else "--last"]
        tui = Tui(self._pid, self.now, card, cwd, argv, env_readable, visible)
        tui.conv_dir = cd or cwd
        self.tuis.append(tui)
        # its connect `gap` after its start (other TUIs may start meanwhile), its first request
        # `late` after that (measured 0.01-0.15 s; a stalled TUI or a busy daemon: later)
        tui.connected_at = self.now + max(gap, 0.2)
        born = self.now + opens * (tui.connected_at - self.now)
        asked = (born + tui.connected_at) / 2
        tui.conn = self._connect(born, asked)
        self._filler("start", asked)
        tui.ready = tui.connected_at + late
        if resume is None:
            self._fresh(tui, "startup", tui.ready, startup=True)
            self.threads[tui.thread].startup = (self.life, tui.conn)
        elif fork:
            self._forked(tui, "startup", self.threads[resume].recorded, tui.ready)
        else:
            self._resume(tui, resume, session_dir, tui.conv_dir, tui.ready)
        return tui

    def _resume(
        self, tui: Tui, sid: str, session_dir: bool, here: str, at: float | None = None
    ) -> None:
        thread = self.threads[sid]
        assert thread.recorded is not None
        self._log("thread/resume", tui.conn, sid, at)
        self._filler("resume")
        self._show(tui, sid)
        tui.conv_dir = thread.recorded if session_dir else here
        tui.pending = "resume"

    def slash_resume(self, tui: Tui, sid: str, choice: str) -> None:
        """`/resume`: "session" directory, or "current" as the TUI's own or where it runs now."""
        own = tui.argv[2] if tui.argv[1:2] == ["-C"] else tui.cwd
        self._resume(tui, sid, choice == "session", own if choice == "own" else tui.conv_dir)

    def slash_new(self, tui: Tui, clear: bool = False) -> None:
        self._fresh(tui, "clear" if clear else "startup")
        self._filler("new")

    def slash_fork(self, tui: Tui, source: str) -> None:
        self._forked(tui, source, tui.conv_dir)

    def _forked(self, tui: Tui, source: str, where: str | None, at: float | None = None) -> None:
        """A new thread forked from another (`/fork`, `codex fork <id>`), recorded at once."""
        sid = self._new_sid()
        self.threads[sid] = Thread(sid, tui.pid, recorded=where)
        self._show(tui, sid)
        tui.conv_dir, tui.pending = where or tui.conv_dir, source
        self._log("thread/fork", tui.conn, sid, at)

    def departed(self, card: str | None, cwd: str, sid: str | None = None) -> Event | None:
        """A client that starts (or resumes `sid`), runs its turn and leaves before the
        hook: `codex queue --resume`, a raw client, a TUI that quits."""
        self._pid += 7
        tui = Tui(self._pid, self.now, card, cwd, ["codex", "queue"], connected=True)
        self.tuis.append(tui)
        tui.conn = self._connect(self.now, self.now, probes=0)
        self._filler("departed")
        late = self.now + 0.15  # its thread's row comes after the hook it sets off (measured)
        self.departing = True
        if sid is None:
            self._fresh(tui, "startup", late)
        else:
            self._resume(tui, sid, True, cwd, late)
        self.departing = False
        tui.connected = False
        self._leave(tui)
        return self.turn(tui, lasts=2.0)  # the queued turn runs on

    def restart(self) -> None:
        """`codex app-server daemon restart`: new ids; the TUIs reconnect, sending nothing."""
        for hook in self.hooks:
            hook.event.found = decide.Attribution(decide.NO_EVIDENCE, "the daemon is gone")
        self.hooks = []
        self.life += 1
        self.since, self.accepted = self.now, 0
        self._filler(1)  # the new daemon's first row
        for tui in self.connected():
            tui.conn = self._connect(self.now, self.now, probes=0)

    def wait(self, seconds: float) -> None:
        self.now += seconds
        self._judge()

    def flush(self) -> None:
        """The daemon writes what it logged so far, and drops its oldest rows without a thread
        past KEPT."""
        self.flushed = self.now
        written = [r for r in self.rows if r.life == self.life and r.ts <= self.now]
        kept = 0
        for _, row in sorted(enumerate(written), key=lambda r: (r[1].ts, r[0]), reverse=True):
            if row.thread is None and not row.gone:
                kept += row.weight
                row.gone = kept > KEPT
        self._judge()

    def quit(self, tui: Tui) -> None:
        self._leave(tui)
        tui.connected = False

    def unload(self, sid: str) -> None:
        """The daemon unloads a thread no TUI shows; a startup thread's tasks then log in its
        startup request's span (0.171.0: `serve_inner: task cancelled`): a startup row, late,
        with no thread."""
        thread = self.threads[sid]
        if not thread.shown and thread.startup is not None and thread.startup[0] == self.life:
            self.rows.append(Row(self.now, "span", thread.startup[1], None, self.life, True))
            thread.startup = None

    def turn(
        self,
        tui: Tui,
        hook_runs: bool = True,
        leaves: bool = False,
        lasts: float = 0.01,
    ) -> Event | None:
        """The TUI's next turn: its conversation's SessionStart, if it has not fired yet
        (judged once the sender has read the log: `flush`, `wait`); `leaves`: the TUI
        quits before its hook runs; the daemon logs the turn for `lasts` seconds."""
        if tui.pending is None:
            self._filler("turn")  # a turn in a conversation already begun: rows, no hook
            return None
        self.now = max(self.now, tui.ready)
        if leaves:
            self.quit(tui)
        source, tui.pending = tui.pending, None
        thread = self.threads[tui.thread]
        if thread.recorded is None:
            thread.recorded = tui.conv_dir
        event = Event(tui, source, thread.sid, tui.conv_dir, lich_of(tui.card), None)
        self.events.append(event)
        self.now += 0.01
        self._filler("turn")
        if hook_runs:
            self.hook(event)
        self._log("turn/start", tui.conn, thread.sid)  # the turn goes on after the hook
        self._log("turn/end", tui.conn, thread.sid, self.now + lasts)
        return event

    # --- what the probe sees, and the real decision -----------------------------------------

    def _client(self, tui: Tui) -> decide.Client:
        lich = lich_of(tui.card) if tui.env_readable else None
        client = decide.Client(tui.pid, tui.argv, tui.cwd, lich)
        client.started = tui.started
        return client

    def hook(self, event: Event) -> None:
        """What the hook reads at once (its clients); the rest when the sender has the log."""
        clients = [self._client(t) for t in self.connected() if t.visible]
        refused = decide.gate(clients, sum(not t.visible for t in self.connected()))
        if refused is not None:
            event.found = refused  # codex.card refuses at once
            return
        self.hooks.append(Hook(event, self.now, clients))

    def _judge(self) -> None:
        """Each waiting sender that has the log past the hook and past each client's window,
        with every request begun shortly before the hook showing its thread, or has waited
        SETTLE: the real rule over the readable rows (evidence.gather)."""
        if not self.hooks:
            return
        readable = [
            r for r in self.rows if r.ts <= self.flushed and r.life == self.life and not r.gone
        ]
        seen = max((r.ts for r in readable), default=0.0)
        connects = [(t.connected_at, t.pid) for t in self.tuis if t.connected_at <= self.flushed]
        threads = {(r.conn, r.req): r.thread for r in readable if r.thread is not None}
        for hook in list(self.hooks):
            starts = {c.pid: c.started or 0.0 for c in hook.clients}
            recent = {p for p, s in starts.items() if s >= hook.at - 2 * CONNECT_WITHIN}
            have = {p for _, p in connects}
            own = [min(t for t, p in connects if p == pid) for pid in starts if pid in have]
            want = max([hook.at, *[t + REQUEST_AFTER for t in own]])
            begun = [
                r
                for r in readable
                if r.thread is None
                and r.method.startswith("thread/")
                and hook.at - 2 * REQUEST_SPAN <= r.ts <= hook.at
            ]
            pending = [r for r in begun if (r.conn, r.req) not in threads]
            ready = seen > want and not pending and recent <= have
            if not ready and self.now < hook.at + SETTLE:
                self._ask(hook, max(seen, want))
                continue  # the sender waits on (evidence.gather)
            self.hooks.remove(hook)
            event = hook.event
            rows = [
                (r.ts, r.method, r.conn)
                for r in readable
                if r.thread == event.session and r.method.startswith("thread/")
            ]
            mine = {c for _, _, c in rows}
            waiting = [(r.ts, r.method, r.conn) for r in pending if r.conn not in mine]
            opened, floor = self._opened(readable, min([hook.at, *starts.values()]), seen, threads)
            known = {(p, c): t for (life, p, c), t in self.remembered.items() if life == self.life}
            held = {
                c.pid: decide.tie(c, seen, self.since, connects, opened, floor, known)
                for c in hook.clients
            }
            for client in hook.clients:  # codex.ties keeps it
                at, tie = decide.connected_at(client, connects), held[client.pid]
                if at is not None and isinstance(tie, int):
                    self.remembered[(self.life, client.pid, at)] = tie
            event.found = decide.from_evidence(rows, hook.clients, held, seen, hook.at, waiting)

    @staticmethod
    def _opened(
        readable: list[Row], low: float, seen: float, threads: Mapping[tuple[int, int], str | None]
    ) -> tuple[dict[int, decide.Opened], float]:
        """evidence.opened over the rows read."""
        found: dict[int, tuple[float, float, Row | None]] = {}
        for _, row in sorted(enumerate(readable), key=lambda r: (r[1].ts, r[0])):
            if row.thread is not None or row.method in ("", "span") or not low <= row.ts <= seen:
                continue  # no `app-server request:` line
            if row.method == "initialize":
                found[row.conn] = (row.ts, float("inf"), None)
            elif row.conn in found:
                born, at, first = found[row.conn]
                if first is None and row.method.startswith("thread/"):
                    first = row
                found[row.conn] = (born, min(at, row.ts), first)

        def what(first: Row | None) -> str | None:
            if first is None:
                return None
            if first.method == "thread/resume":
                return threads.get((first.conn, first.req))
            return decide.STARTUP if first.startup else ""

        oldest = min((r.ts for r in readable if r.thread is None), default=float("inf"))
        floor = float("-inf") if 0 in found else oldest
        return {c: (born, at, what(first)) for c, (born, at, first) in found.items()}, floor
