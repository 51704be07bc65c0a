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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lich_hooks.hook.shared.codex import decide

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
    started: int
    card: str | None  # None: a TUI outside lich
    cwd: str
    argv: list[str]
    env_readable: bool = True
    visible: bool = True  # False: a process the probe cannot read (name, user, fds)
    connected: bool = True
    thread: str = ""
    conv_dir: str = ""  # where its conversation (and the next one) runs
    pending: str | None = None  # the source of the SessionStart its next turn fires


@dataclass
class Thread:
    sid: str
    owner: int  # pid of the TUI that started it
    recorded: str | None = None  # session_meta's cwd, once its rollout exists
    loaded: bool = False
    shown: set[int] = field(default_factory=set)  # pids of connected TUIs showing it


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
        self._clock = 5000
        self._sid = 0

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

    def _fresh(self, tui: Tui, source: str) -> None:
        sid = self._new_sid()
        self.threads[sid] = Thread(sid, tui.pid)
        self._show(tui, sid)
        tui.pending = source

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
    ) -> Tui:
        """A new TUI: `codex [-C cd]`, or `codex resume <id>|--last` (`named` False)."""
        self._pid += 7
        self._clock += 3
        argv = ["codex"]
        if cd is not None:
            argv += ["-C", cd]
        if resume is not None:
            argv += ["resume", resume if named else "--last"]
        tui = Tui(self._pid, self._clock, card, cwd, argv, env_readable, visible)
        tui.conv_dir = decide.conversation_dir(self._client(tui)) or cwd
        self.tuis.append(tui)
        if resume is None:
            self._fresh(tui, "startup")
        else:
            self._resume(tui, resume, session_dir, here=tui.conv_dir)
        return tui

    def _resume(self, tui: Tui, sid: str, session_dir: bool, here: str) -> None:
        thread = self.threads[sid]
        assert thread.recorded is not None
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

    def quit(self, tui: Tui) -> None:
        self._leave(tui)
        tui.connected = False

    def unload(self, sid: str) -> None:
        thread = self.threads[sid]
        if not thread.shown:
            thread.loaded = False

    def turn(self, tui: Tui, hook_runs: bool = True) -> Event | None:
        """The TUI's next turn: its conversation's SessionStart, if it has not fired yet."""
        if tui.pending is None:
            return None
        source, tui.pending = tui.pending, None
        thread = self.threads[tui.thread]
        if thread.recorded is None:
            thread.recorded = tui.conv_dir
        thread.loaded = True
        found = self.hook(tui, source) if hook_runs else None
        event = Event(tui, source, thread.sid, tui.conv_dir, lich_of(tui.card), found)
        self.events.append(event)
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

    def hook(self, tui: Tui, source: str) -> decide.Attribution:
        """What the hook decides: the real rule over exactly what the probe would see."""
        clients = [self._client(t) for t in self.connected() if t.visible]
        unaccounted = sum(not t.visible for t in self.connected())
        thread = self.threads[tui.thread]
        recorded = None if source in decide.FRESH_SOURCES else thread.recorded
        return decide.attribute(clients, tui.conv_dir, source, recorded, unaccounted)
