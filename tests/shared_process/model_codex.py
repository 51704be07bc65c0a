"""A pure model of Codex's shared app-server daemon and the TUIs of several cards.

It holds the ground truth (which TUI, of which card, runs which conversation
where) and emits exactly what the probe (lich_hooks/hook/shared/codex/probe.py)
observes at a SessionStart: the connected clients with their argv, cwd,
LICH_* and start time (and, for `codex resume <id>`, the recorded directory
of that session while the daemon holds it), and the payload. The real
decision (`decide.attribute`) runs on that; nothing of it is mocked. The
daemon's loaded sessions are kept (the probe's rule before this one read
them, and `resumed_dir` does) but no longer decide anything.

Calibrated against real Codex 0.171.0 (tests/real_clients/test_codex_daemon.py
drives these with two TUIs on pseudo-terminals):
- one daemon per CODEX_HOME, every TUI a client; the TUI's process cwd and
  argv never change, whatever it resumes;
- SessionStart fires once per conversation, when its first turn starts
  (`startup` for a new TUI or `/new`, `clear` for `/clear`, `resume` for a
  resumed session), with the conversation's directory as `cwd`;
- a resume asks "session directory or current directory?";
- the daemon keeps a loaded session's rollout open, and a TUI's new
  conversation has no rollout before its first turn;
- a TUI may resume the session another connected TUI still shows (0.171.0
  accepts it: "overrides ignored for loaded thread"): two TUIs on one thread.
Assumptions (where the model is wider than what was seen, so the proof holds
for every choice):
- the daemon may unload any session no connected TUI shows at any moment:
  the delay is the user's `thread_unload_delay_secs` (real Codex 0.171.0
  holds an idle session past 5 s by default and lets it go at once with 0:
  tests/real_clients/test_codex_daemon.py), and a restart unloads everything;
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
  (drawn here 0.3-12 s after its start; measured 0.96-1.54 s, 4.2-8.5 s on a first
  start), never on a reconnect; a plain TUI's connection then sends `thread/start`
  id `startup-thread-start-<uuid>` within REQUEST_AFTER (0.02 s here; measured
  0.01-0.15 s); `codex resume|fork|agents`, `queue` and raw clients send none;
- rows become readable in batches, in time order, at any moment (`flush`); a row
  follows each hook (its turn); a resume's thread row may come up to 0.15 s
  after the hook it sets off (AFTER_HOOK waits 1 s); rows are never dropped (unverified: Codex's
  writer drops rows when its queue is full); nobody forges a row;
- a client may start or resume a thread, run its turn and leave before the
  hook (`codex queue --resume`, a raw client, a TUI that quits); the daemon
  restarts at any moment (its pending hooks then find it gone: refused);
- the daemon runs before any TUI here (a TUI spawning it connects after its
  start, which is all decide.tie asks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lich_hooks.hook.shared.codex import decide
from lich_hooks.hook.shared.codex.decide import AFTER_HOOK, REQUEST_AFTER, REQUEST_SPAN

SETTLE = 15.0  # evidence.SETTLE: how long the sender waits for the daemon's next write

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
    loaded: bool = False
    shown: set[int] = field(default_factory=set)  # pids of connected TUIs showing it


@dataclass
class Row:
    """One row of the daemon's log: a thread request (`startup`: a TUI's first)."""

    ts: float
    method: str
    conn: int
    thread: str | None
    life: int  # which daemon wrote it
    startup: bool = False


@dataclass
class Hook:
    """A SessionStart whose sender waits for the daemon's log: what the hook read."""

    event: Event
    at: float
    clients: list[decide.Client]
    unaccounted: int
    life: int
    cwd: str
    recorded: str | None


@dataclass
class Event:
    """One SessionStart: what the hook saw, what it decided, and the truth."""

    tui: Tui
    source: str
    session: str
    cwd: str
    truth: dict[str, str]  # the firing TUI's LICH_* ({} outside lich)
    found: decide.Attribution | None  # None: the hook did not run
    old: decide.Attribution | None = None  # the every-TUI rule's verdict, for ordinary.py

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
        thread = self.threads[sid]
        thread.shown.add(tui.pid)
        if thread.recorded is not None:
            thread.loaded = True

    def _fresh(self, tui: Tui, source: str, at: float | None = None) -> None:
        sid = self._new_sid()
        self.threads[sid] = Thread(sid, tui.pid)
        self._show(tui, sid)
        tui.pending = source
        self._log("thread/start", tui.conn, sid, at)

    def _log(self, method: str, conn: int, thread: str | None, at: float | None = None) -> None:
        """A row; a thread request's first is logged as it begins (`now` for a departed
        client's, whose thread row comes later), with no thread id yet."""
        ts = self.now if at is None else at
        if method.startswith("thread/"):
            begun = self.now if self.departing else ts
            self.rows.append(Row(begun, method, conn, None, self.life))
        self.rows.append(Row(ts, method, conn, thread, self.life))

    def _connect(self) -> int:
        self.accepted += 3  # two probes, then the session's connection
        return self.accepted - 1

    # --- actions ---------------------------------------------------------------------------

    def start(
        self,
        card: str | None,
        cwd: str,
        cd: str | None = None,
        resume: str | None = None,
        session_dir: bool = True,
        named: bool = True,
        env_readable: bool = True,
        visible: bool = True,
        gap: float = 1.0,
    ) -> Tui:
        """A new TUI: `codex [-C cd]`, or `codex resume <id>|--last` (`named` False); its
        first request `gap` seconds after its start (a startup request if plain)."""
        self._pid += 7
        argv = ["codex"]
        if cd is not None:
            argv += ["-C", cd]
        if resume is not None:
            argv += ["resume", resume if named else "--last"]
        tui = Tui(self._pid, self.now, card, cwd, argv, env_readable, visible)
        tui.conv_dir = decide.conversation_dir(self._client(tui)) or cwd
        self.tuis.append(tui)
        tui.ready = self.now + max(gap, 0.2)  # its first request: other TUIs may start meanwhile
        tui.conn, tui.connected_at = self._connect(), tui.ready - 0.02
        if resume is None:
            self._fresh(tui, "startup", tui.ready)
            self.rows[-1].startup = True
        else:
            self._resume(tui, resume, session_dir, tui.conv_dir, tui.ready)
        return tui

    def _resume(
        self, tui: Tui, sid: str, session_dir: bool, here: str, at: float | None = None
    ) -> None:
        thread = self.threads[sid]
        assert thread.recorded is not None
        self._log("thread/resume", tui.conn, sid, at)
        self._show(tui, sid)
        tui.conv_dir = thread.recorded if session_dir else here
        tui.pending = "resume"

    def slash_resume(self, tui: Tui, sid: str, choice: str) -> None:
        """`/resume`: "session" directory, or "current" as the TUI's own or where it runs now."""
        own = decide.conversation_dir(self._client(tui)) or tui.cwd
        self._resume(tui, sid, choice == "session", own if choice == "own" else tui.conv_dir)

    def slash_new(self, tui: Tui, clear: bool = False) -> None:
        self._fresh(tui, "clear" if clear else "startup")

    def slash_fork(self, tui: Tui, source: str) -> None:
        sid = self._new_sid()
        self.threads[sid] = Thread(sid, tui.pid, recorded=tui.conv_dir)
        self._show(tui, sid)
        tui.pending = source
        self._log("thread/fork", tui.conn, sid)

    def departed(self, card: str | None, cwd: str, sid: str | None = None) -> Event | None:
        """A client that starts (or resumes `sid`), runs its turn and leaves before the
        hook: `codex queue --resume`, a raw client, a TUI that quits."""
        self._pid += 7
        tui = Tui(self._pid, self.now, card, cwd, ["codex", "queue"], connected=True)
        self.tuis.append(tui)
        tui.conn = self._connect()
        late = self.now + 0.15  # its thread's row comes after the hook it sets off (measured)
        self.departing = True
        if sid is None:
            self._fresh(tui, "startup", late)
        else:
            self._resume(tui, sid, True, cwd, late)
        self.departing = False
        tui.connected = False
        self._leave(tui)
        return self.turn(tui, connected=False, lasts=2.0)  # the queued turn runs on

    def restart(self) -> None:
        """`codex app-server daemon restart`: new ids; the TUIs reconnect, sending nothing."""
        for hook in self.hooks:
            hook.event.found = decide.Attribution(decide.NO_EVIDENCE, "the daemon is gone")
        self.hooks = []
        self.life += 1
        self.since, self.accepted = self.now, 0
        for tui in self.connected():
            tui.conn = self._connect()
        for thread in self.threads.values():
            thread.loaded = False

    def wait(self, seconds: float) -> None:
        self.now += seconds
        self._judge()

    def flush(self) -> None:
        """The daemon writes what it logged so far."""
        self.flushed = self.now
        self._judge()

    def quit(self, tui: Tui) -> None:
        self._leave(tui)
        tui.connected = False

    def unload(self, sid: str) -> None:
        thread = self.threads[sid]
        if not thread.shown:
            thread.loaded = False

    def turn(
        self,
        tui: Tui,
        hook_runs: bool = True,
        connected: bool = True,
        leaves: bool = False,
        lasts: float = 0.01,
    ) -> Event | None:
        """The TUI's next turn: its conversation's SessionStart, if it has not fired yet
        (judged once the sender has read the log: `flush`, `wait`); `leaves`: the TUI
        quits before its hook runs; the daemon logs the turn for `lasts` seconds."""
        if tui.pending is None:
            return None
        self.now = max(self.now, tui.ready)
        if leaves:
            self.quit(tui)
            connected = False
        source, tui.pending = tui.pending, None
        thread = self.threads[tui.thread]
        if thread.recorded is None:
            thread.recorded = tui.conv_dir
        thread.loaded = connected
        event = Event(tui, source, thread.sid, tui.conv_dir, lich_of(tui.card), None)
        self.events.append(event)
        self.now += 0.01
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
        switched = decide.switcher(tui.argv)
        if switched is not None and switched[1] is not None:
            named = self.threads.get(switched[1])
            if named is not None and named.loaded:
                client.resumed_dir = named.recorded
        return client

    def loaded(self) -> dict[str, str | None]:
        return {s.sid: s.recorded for s in self.threads.values() if s.loaded}

    def hook(self, event: Event) -> None:
        """What the hook reads at once (its clients); the rest when the sender has the log."""
        clients = [self._client(t) for t in self.connected() if t.visible]
        unaccounted = sum(not t.visible for t in self.connected())
        recorded = (
            None if event.source in decide.FRESH_SOURCES else self.threads[event.session].recorded
        )
        old = event.old = decide.attribute(clients, event.cwd, event.source, recorded, unaccounted)
        if old.decision == decide.UNACCOUNTED or not any(c.lich for c in clients):
            event.found = old  # codex.card refuses at once (REFUSED, or no card to name)
            return
        self.hooks.append(
            Hook(event, self.now, clients, unaccounted, self.life, event.cwd, recorded)
        )

    def _judge(self) -> None:
        """Each waiting sender that has its row after the hook (and, within SETTLE, after each
        client's tie window) or has waited SETTLE: the real rule over the readable rows."""
        if not self.hooks:
            return
        readable = [r for r in self.rows if r.ts <= self.flushed and r.life == self.life]
        seen = max((r.ts for r in readable), default=0.0)
        own = {t.pid: [t.connected_at] for t in self.tuis if t.connected_at <= self.flushed}
        for hook in list(self.hooks):
            pids = [c.pid for c in hook.clients if c.lich and c.pid in own]
            mine = {r.conn for r in readable if r.thread == hook.event.session}
            others = {
                r.conn
                for r in readable
                if r.thread is None
                and r.method.startswith("thread/")
                and hook.at - REQUEST_SPAN <= r.ts <= hook.at
            }
            after = hook.at + (AFTER_HOOK if others - mine else 0.0)
            want = max([after, *[own[pid][0] + REQUEST_AFTER for pid in pids]])
            if self.now < want + SETTLE and seen <= want:
                continue  # the sender waits on (evidence.gather)
            self.hooks.remove(hook)
            event = hook.event
            rows = [
                (r.ts, r.method, r.conn)
                for r in readable
                if r.thread == event.session and r.method.startswith("thread/")
            ]
            begun = [
                (r.ts, r.method, r.conn)
                for r in readable
                if r.thread is None and r.method.startswith("thread/") and r.ts <= hook.at
            ]
            startups = [(r.ts, r.method, r.conn) for r in readable if r.startup]
            event.found = decide.from_evidence(
                rows, startups, hook.clients, seen, hook.at, self.since, own, begun
            )
