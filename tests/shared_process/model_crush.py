"""A pure model of `crush server` (CRUSH_CLIENT_SERVER=1) and the clients of several cards.

It holds the ground truth (which client, of which card, runs which session)
and emits exactly what the probe (lich_hooks/hook/shared/crush/probe.py)
observes at a PreToolUse: the server's workspaces (`GET /v1/workspaces`: id,
path, the creating client's env), whether the payload's session is the
workspace's (`GET /v1/workspaces/{id}/sessions/{sid}`), and the connected
crush clients with their argv, cwd and LICH_*. The real decision
(`decide.workspace_at`, `decide.choose`) runs on that.

Calibrated against Crush v0.90.0's source (internal/backend/backend.go) and
the real server (tests/real_clients/test_crush_server.py):
- one workspace per directory; the first client there creates it with its
  environment, later ones join it with theirs dropped ("first wins");
- a client works in its `--cwd`/`-c` directory if given, else its own;
- a workspace goes when its last client leaves (at once on a clean exit,
  after a 10 s grace when a client vanished), and the server shuts itself
  down 60 s after its last workspace went, keeping the first client's
  environment until then; a client that comes within the 60 s reuses it;
- a session belongs to its directory (the project's database), so a client
  in that directory can continue any of them (`--session`, `--continue`);
- every tool call of a session fires PreToolUse, with the workspace's
  directory as `cwd`.
- a TUI shows one session at a time and the server counts who shows it
  (`attached_clients`); a `crush run` shows none;
- a turn goes on after the client that started it quits, for as long as
  the workspace has other clients (its run is cancelled when the workspace
  goes).
Assumptions: a hook may not run; a client's environment may be unreadable, or the
client itself unseen (started under another name, another user's, non-dumpable: the
probe sees its connection to the server and no crush process holding it);
a TUI showing a session another card's turn runs in is that card's view of
it, so naming the TUI's card is right too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lich_hooks.hook.shared.crush import decide

DIRS = ("/w/p0", "/w/p1", "/w/p2")
CARDS = ("card-A", "card-B", "card-C")


def lich_of(card: str | None) -> dict[str, str]:
    if card is None:
        return {}
    n = CARDS.index(card)
    return {"LICH_SESSION_ID": card, "LICH_PORT": str(4800 + n), "LICH_TOKEN": f"tok-{card}-xxxx"}


@dataclass
class Crush:
    pid: int
    card: str | None
    cwd: str  # the process's own working directory
    argv: list[str]
    dir: str  # where it works: --cwd, else cwd
    env_readable: bool = True
    visible: bool = True  # the probe reads it as a crush process holding its connection
    connected: bool = True
    run: bool = False  # `crush run`: attaches to no session
    session: str | None = None
    reported: set[str] = field(default_factory=set)  # sessions whose first call fired here


@dataclass
class Space:
    id: str
    path: str
    env: dict[str, str] | None  # the creating client's LICH_* (None: unreadable)
    claims: set[int] = field(default_factory=set)  # pids holding it (grace included)


@dataclass
class Call:
    client: Crush  # the one that started the turn (it may have quit since)
    session: str
    cwd: str
    truth: list[dict[str, str]]  # its card, and the cards of the TUIs showing the session
    first: bool  # the session's first tool call from this client
    found: decide.Attribution | None

    @property
    def named(self) -> dict[str, str] | None:
        return None if self.found is None else dict(self.found.lich or {}) or None

    @property
    def wrong(self) -> bool:
        named = self.named
        return named is not None and named not in self.truth


class Server:
    def __init__(self) -> None:
        self.clients: list[Crush] = []
        self.spaces: dict[str, Space] = {}
        self.sessions: dict[str, str] = {}  # session -> its directory
        self.busy: dict[str, Crush] = {}  # session -> the client whose turn runs in it
        self.events: list[Call] = []
        self.alive = False
        self.lingering = False  # no workspace left: shuts down 60 s later
        self._n = 0

    def _next(self) -> int:
        self._n += 1
        return self._n

    def connected(self) -> list[Crush]:
        return [c for c in self.clients if c.connected]

    def join(
        self,
        card: str | None,
        cwd: str,
        cd: str | None = None,
        env_readable: bool = True,
        run: bool = False,
        visible: bool = True,
    ) -> Crush:
        """A `crush [--cwd cd]` (or `crush run`) client: it joins or creates its workspace."""
        argv = ["crush"] + (["--cwd", cd] if cd is not None else []) + (["run"] if run else [])
        where = decide.normalise(cd if cd is not None and cd.startswith("/") else cwd)
        client = Crush(
            2000 + 7 * self._next(), card, cwd, argv, where, env_readable, visible, run=run
        )
        self.clients.append(client)
        self.alive, self.lingering = True, False
        space = next((s for s in self.spaces.values() if s.path == where), None)
        if space is None:
            env = lich_of(card) if env_readable else None
            space = Space(f"ws-{self._next()}", where, env)
            self.spaces[space.id] = space
        space.claims.add(client.pid)
        self.new_session(client)
        return client

    def new_session(self, client: Crush) -> None:
        sid = f"sess-{self._next()}"
        self.sessions[sid] = client.dir
        client.session = sid

    def continue_session(self, client: Crush, sid: str) -> None:
        """`--session`/`--continue`, or picking one in the TUI: any session of its directory."""
        if self.sessions.get(sid) == client.dir:
            client.session = sid

    def leave(self, client: Crush, clean: bool = True) -> None:
        """The client exits; a clean exit releases its claim at once, else after the grace."""
        client.connected = False
        if clean:
            self.release(client.pid)

    def release(self, pid: int) -> None:
        for space in list(self.spaces.values()):
            space.claims.discard(pid)
            if not space.claims:
                del self.spaces[space.id]
                for sid in [s for s, d in self.sessions.items() if d == space.path]:
                    self.busy.pop(sid, None)  # the workspace's runs are cancelled
        if not self.spaces:
            self.lingering = True

    def grace_ends(self) -> None:
        for client in self.clients:
            if not client.connected:
                self.release(client.pid)

    def idle(self, shut_down: bool) -> None:
        """Time passes: claims of vanished clients lapse; a lingering server may shut down."""
        self.grace_ends()
        if shut_down and self.lingering:
            self.alive, self.lingering = False, False

    def tool_call(self, client: Crush, hook_runs: bool = True) -> Call | None:
        """A tool call of the client's own turn (started now if none runs in its session)."""
        if client.session is None:
            return None
        if self.busy.get(client.session, client) is not client:
            return None  # another client's turn runs there: Crush queues this prompt
        self.busy[client.session] = client
        return self.fire(client.session, hook_runs)

    def background_call(self, i: int, hook_runs: bool = True) -> Call | None:
        """A tool call of any running turn: its client may show another session by now, or
        have quit (Crush runs the turn on while the workspace has clients)."""
        running = sorted(self.busy)
        return self.fire(running[i % len(running)], hook_runs) if running else None

    def finish(self, client: Crush) -> None:
        if client.session is not None and self.busy.get(client.session) is client:
            del self.busy[client.session]

    def fire(self, sid: str, hook_runs: bool) -> Call:
        starter = self.busy[sid]
        first = sid not in starter.reported
        starter.reported.add(sid)
        found = self.hook(starter, sid) if hook_runs else None
        truth = [lich_of(starter.card)] + [lich_of(c.card) for c in self.viewers(sid)]
        call = Call(starter, sid, self.sessions[sid], truth, first, found)
        self.events.append(call)
        return call

    def viewers(self, sid: str) -> list[Crush]:
        return [
            c
            for c in self.connected()
            if not c.run and c.session == sid and c.dir == self.sessions[sid]
        ]

    # --- what the probe sees, and the real decision -----------------------------------------

    def hook(self, client: Crush, sid: str) -> decide.Attribution:
        where = self.sessions[sid]  # the hook runs in the session's workspace
        listed = [decide.Workspace(s.id, s.path, s.env) for s in self.spaces.values()]
        workspace = decide.workspace_at(listed, where)
        if isinstance(workspace, decide.Attribution):
            return workspace
        held = self.sessions.get(sid) == workspace.path
        viewers = len(self.viewers(sid)) if held else None
        clients = decide.account(*self.probe_peers())
        if isinstance(clients, decide.Attribution):
            return clients
        return decide.choose(workspace, sid, held, clients, None, viewers)

    def probe_peers(self) -> tuple[set[int], list[decide.Client], int]:
        """The server's accepted connections (one per client, named by its pid here) and the
        crush processes holding them that the probe reads, all of the server's user (0)."""
        holders = []
        for c in self.connected():
            if c.visible:
                holder = decide.Client(
                    c.pid, c.argv, c.cwd, lich_of(c.card) if c.env_readable else None
                )
                holder.held, holder.uid = {c.pid}, 0
                holders.append(holder)
        return {c.pid for c in self.connected()}, holders, 0
