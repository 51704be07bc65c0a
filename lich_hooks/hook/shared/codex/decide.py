"""Which lich card a Codex hook reports for: pure decisions over a process snapshot.

Codex's interactive TUI (0.157 and later) runs every hook inside one shared
`codex app-server … --managed-daemon` per CODEX_HOME. That daemon was started
by whichever TUI came first and carries that TUI's environment, so under it
the hook's own LICH_* name the first card, not the card whose conversation
fired the hook. Nothing from the client TUI (pid, environment, terminal)
reaches the hook or its payload; the payload's `cwd` is the only link.

So the decision has two steps, each a function of data the probe recorded
(`probe.py` does the /proc and netlink reading):

1. `runner(ancestors)`: the nearest `codex` process above the hook. A client
   (the TUI with `--no-daemon`, `codex exec`) runs hooks as its children and
   the hook's own environment is the card's: nothing changes. An
   `app-server` is the shared daemon: the hook's own LICH_* are never used.
2. `choose(clients, cwd, source, recorded)`: among the daemon's connected
   client TUIs, keep those whose conversation can be in the payload's `cwd`.
   They must all name one card (same LICH_SESSION_ID, LICH_PORT and
   LICH_TOKEN, each valid as LichEnv requires); then that card is the answer.
   No client, a client outside lich, an unreadable or invalid environment, or
   two cards in one directory: send nothing and say why. A wrong card is
   worse than none: lich resumes the card from it.

Where a conversation runs is not always where its TUI runs. Resuming or
forking a session recorded in another directory asks "use session directory
or current directory?" (session directory is the default), and the TUI's
`/resume` does the same without any trace in its argv. So:
- a TUI started as `codex resume|fork <id>` can be in its own directory or in
  that session's recorded one; with `--last`, the picker, a session name, or
  `codex agents` (which switches among sessions anywhere) it can be anywhere;
- a SessionStart that is not a new conversation (`source` other than
  startup or clear) running in the directory its session was recorded in may
  come from any TUI that chose "session directory": every connected client
  is a candidate. In another directory it came from a TUI
  that chose "current directory", i.e. one working there.

A TUI can also move without any trace in its process or a hook: `/resume` of
a session recorded elsewhere, "session directory", then `/new` before any
turn fires SessionStart only for the new conversation, in the other
directory, where another card's TUI works. So a cwd match counts only while
nothing unattributed happened in that directory (`moves`, `movers`): a
resume or fork there, or a session recorded there that the daemon holds and
no report attributed, marks every client connected then (that could not be
there by its cwd) as possibly there, for as long as it stays connected
(moves.py keeps the marks); `choose` counts marked clients as candidates
(`moved`), so two cards among them refuse.

docs/harnesses.md (Codex) explains the daemon and these limits to users.
"""

from __future__ import annotations

from lich_hooks.base.lichenv import LichEnv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence
    from typing import Literal

    RunnerKind = Literal["own", "daemon", "server", "unknown"]  # server: crush_server's
    # The run log's `decision` for a hook under the Codex daemon or a crush server
    # (docs/harnesses.md; crush_server/decide.py names its own).
    AttributionDecision = Literal[
        "codex-daemon-card",
        "codex-daemon-no-client",
        "codex-daemon-client-outside-lich",
        "codex-daemon-client-unreadable",
        "codex-daemon-client-invalid",
        "codex-daemon-several-cards",
        "codex-daemon-moved-here",
        "codex-daemon-no-cwd",
        "codex-daemon-no-record",
        "codex-daemon-unsupported",
        "codex-daemon-probe-failed",
        "crush-server-card",
        "crush-server-client-outside-lich",
        "crush-server-client-unreadable",
        "crush-server-client-invalid",
        "crush-server-several-cards",
        "crush-server-no-cwd",
        "crush-server-no-workspace",
        "crush-server-session-elsewhere",
        "crush-server-no-client",
        "crush-server-unsupported",
        "crush-server-probe-failed",
    ]
    # one_card()'s words: found, outside lich, unreadable, invalid, several cards
    Words = tuple[
        AttributionDecision,
        AttributionDecision,
        AttributionDecision,
        AttributionDecision,
        AttributionDecision,
    ]

LICH_KEYS = ("LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID")
CODEX_NAMES = ("codex", "codex.exe")
CD_FLAGS = ("-C", "--cd")
# Subcommands whose TUI runs a session that may live in another directory.
SWITCHERS = ("resume", "fork", "agents")
# SessionStart sources that start a new conversation in the TUI's directory;
# any other (resume, fork, compact, or one we do not know) may continue one
# that was resumed into another directory. A compaction keeps its id, so lich
# loses nothing when such a report is dropped.
FRESH_SOURCES = ("startup", "clear")
# Sources that keep the conversation where it already runs: they move nobody.
STAYING_SOURCES = (*FRESH_SOURCES, "compact")

# runner() verdicts
# a codex client runs the hook, or no codex at all: the hook's env is the card's
OWN: RunnerKind = "own"
DAEMON: RunnerKind = "daemon"  # the shared app-server runs it: find the card among its clients
UNKNOWN: RunnerKind = "unknown"  # the ancestry could not be read: cannot tell which


def is_codex(argv: Sequence[str]) -> bool:
    """A process whose executable is named codex (the native binary, not npm's node wrapper)."""
    if not argv:
        return False
    name = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name in CODEX_NAMES


def is_app_server(argv: Sequence[str]) -> bool:
    """`codex app-server …`: the daemon (`--managed-daemon`), or any app-server host.

    Any app-server counts as shared, not only `--managed-daemon`: an app-server
    serves whatever clients connect to it, so its own environment never proves
    whose conversation fired a hook. One with no connected codex client (an
    editor's stdio app-server) then reports nothing rather than a guess.
    """
    return is_codex(argv) and len(argv) > 1 and argv[1] == "app-server"


class Runner:
    """Who runs this hook: OWN, DAEMON (with its pid) or UNKNOWN, and the evidence."""

    __slots__ = ("kind", "pid", "why")

    def __init__(self, kind: RunnerKind, why: str, pid: int | None = None) -> None:
        self.kind = kind
        self.why = why
        self.pid = pid

    def __repr__(self) -> str:
        return f"Runner({self.kind!r}, {self.why!r}, pid={self.pid})"


def runner(ancestors: Sequence[tuple[int, Sequence[str]]] | None) -> Runner:
    """Classify the hook's ancestry, nearest first, as the probe read it (None: unreadable).

    The nearest codex decides: a TUI's own hook (`--no-daemon`) has no daemon
    above it, and a codex started from a tool command under the daemon has the
    daemon further up but runs its own hooks as its children.
    """
    return nearest(ancestors, (is_app_server, DAEMON, "codex app-server"), (is_codex, "codex"))


def nearest(
    ancestors: Sequence[tuple[int, Sequence[str]]] | None,
    shared: tuple[Callable[[Sequence[str]], bool], RunnerKind, str],
    own: tuple[Callable[[Sequence[str]], bool], str],
) -> Runner:
    """The runner for any harness that may run hooks in a shared process (Codex's
    daemon, Crush's server): the nearest of its processes above the hook decides.

    `shared` is (is that process, its kind, how a person names it), `own` is (is a
    process of the harness, its name).
    """
    if ancestors is None:
        return Runner(UNKNOWN, "the hook's parent processes cannot be read on this system")
    is_shared, kind, shared_name = shared
    is_own, name = own
    for pid, argv in ancestors:
        if is_shared(argv):
            return Runner(kind, f"{shared_name} {pid} runs this hook", pid)
        if is_own(argv):
            return Runner(OWN, f"{name} process {pid} runs this hook as its child")
    return Runner(OWN, f"no {name} process among the hook's parents")


class Client:
    """One codex process connected to the daemon, as the probe recorded it.

    `cwd` is its working directory (None: gone or unreadable); `lich` holds its
    LICH_PORT/LICH_TOKEN/LICH_SESSION_ID (only those; absent keys are absent)
    or is None when its environment could not be read. `resumed_dir` is the
    recorded directory of the session a `codex resume|fork <id>` names, when
    the probe found it. `started` (its start time) makes `(pid, started)` name
    this process and no later one; `unscanned` says why its open files were
    not read (then it may or may not be connected: it competes for its
    directory and is never named).
    """

    __slots__ = ("argv", "cwd", "lich", "pid", "resumed_dir", "started", "unscanned")

    def __init__(
        self,
        pid: int,
        argv: Sequence[str],
        cwd: str | None,
        lich: Mapping[str, str] | None,
        resumed_dir: str | None = None,
    ) -> None:
        self.pid = pid
        self.argv = list(argv)
        self.cwd = cwd
        self.lich = lich
        self.resumed_dir = resumed_dir
        self.started: int | None = None
        self.unscanned: str | None = None

    @property
    def identity(self) -> tuple[int, int] | None:
        """(pid, start time): this process for its whole life, None when its start is unknown."""
        return None if self.started is None else (self.pid, self.started)

    def __repr__(self) -> str:
        return f"Client({self.pid}, cwd={self.cwd!r})"


def normalise(path: str) -> str:
    """Lexically normal absolute form (no filesystem access: the probe resolved symlinks)."""
    import posixpath

    return posixpath.normpath(path)


def conversation_dir(client: Client) -> str | None:
    """The directory the client's conversation runs in: `-C/--cd DIR` if given, else its cwd.

    Codex starts the thread in `--cd`'s directory without changing its own
    working directory, so the flag wins. A relative DIR is taken from the cwd.
    """
    if client.cwd is None:
        return None
    args = client.argv[1:]
    for index, arg in enumerate(args):
        if arg == "--":
            break
        value = None
        if arg in CD_FLAGS and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith("--cd="):
            value = arg[len("--cd=") :]
        elif arg.startswith("-C") and len(arg) > 2:
            value = arg[2:]
        if value is not None:
            return normalise(value if value.startswith("/") else f"{client.cwd}/{value}")
    return normalise(client.cwd)


def switcher(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """`(subcommand, session id)` for `codex resume|fork [<uuid>]` and `codex agents`, else None.

    Any argument spelled like one of those subcommands counts (a prompt that
    is the single word "resume" included): mistaking a TUI for one that can
    be anywhere only costs a report, the other way round could cost a card.
    """
    args = list(argv[1:])
    if "--" in args:
        args = args[: args.index("--")]
    for index, arg in enumerate(args):
        if arg in SWITCHERS:
            rest = [a for a in args[index + 1 :] if not a.startswith("-")]
            named = rest[0] if rest and arg != "agents" and "--last" not in args else None
            return arg, named if named is not None and _is_uuid(named) else None
    return None


def _is_uuid(text: str) -> bool:
    parts = text.split("-")
    return [len(p) for p in parts] == [8, 4, 4, 4, 12] and all(
        c in "0123456789abcdefABCDEF" for c in "".join(parts)
    )


def possible_dirs(client: Client) -> set[str] | None:
    """Every directory this client's conversation can run in; None: any directory."""
    here = conversation_dir(client)
    if here is None:
        return set()  # gone
    switched = switcher(client.argv)
    if switched is None:
        return {here}
    _, session = switched
    if session is None or client.resumed_dir is None:
        return None
    return {here, normalise(client.resumed_dir)}


class Attribution:
    """The card a daemon-run hook reports for, or why it reports nothing.

    `lich` is the chosen client's LICH_* (a report can be built from it with
    LichEnv), None on a refusal. `decision` is the word the run log records.
    """

    __slots__ = ("client", "decision", "lich", "why")

    def __init__(
        self,
        decision: AttributionDecision,
        why: str,
        lich: Mapping[str, str] | None = None,
        client: int | None = None,
    ) -> None:
        self.decision = decision
        self.why = why
        self.lich = lich
        self.client = client

    def __repr__(self) -> str:
        return f"Attribution({self.decision!r}, {self.why!r}, client={self.client})"


FOUND: AttributionDecision = "codex-daemon-card"
NO_CLIENT: AttributionDecision = "codex-daemon-no-client"
NOT_IN_LICH: AttributionDecision = "codex-daemon-client-outside-lich"
UNREADABLE: AttributionDecision = "codex-daemon-client-unreadable"
INVALID: AttributionDecision = "codex-daemon-client-invalid"
SEVERAL: AttributionDecision = "codex-daemon-several-cards"
MOVED: AttributionDecision = "codex-daemon-moved-here"
NO_CWD: AttributionDecision = "codex-daemon-no-cwd"
NO_RECORD: AttributionDecision = "codex-daemon-no-record"
WORDS: Words = (FOUND, NOT_IN_LICH, UNREADABLE, INVALID, SEVERAL)


def moves(source: str | None, recorded: str | None, want: str) -> bool:
    """Can this SessionStart be a TUI taking its thread into `want` from elsewhere?

    A resume or fork (or a source we do not know) of a session recorded in
    `want` (or recorded we do not know where): whoever resumed it chose
    "session directory". A fresh conversation or a compaction moves nobody.
    """
    if source in STAYING_SOURCES:
        return False
    return recorded is None or normalise(recorded) == normalise(want)


def movers(clients: Sequence[Client], want: str) -> list[Client]:
    """The connected clients to mark for `want`: those its cwd and argv do not place there."""
    return [c for c in clients if conversation_dir(c) is not None and not _can_run_in(c, want)]


def strays(
    loaded: Mapping[str, str | None], want: str, session: str | None, accounted: Collection[str]
) -> list[str]:
    """Sessions the daemon holds that were recorded in `want` and no report attributed.

    `loaded` maps each held session to its recorded directory (None:
    unknown, which counts); the payload's own `session` and the `accounted`
    ones (reported for a client still connected) are not strays.
    """
    return sorted(
        sid
        for sid, where in loaded.items()
        if sid != session
        and sid not in accounted
        and (where is None or normalise(where) == normalise(want))
    )


def choose(
    clients: Sequence[Client],
    cwd: str | None,
    source: str | None = None,
    recorded: str | None = None,
    moved: Collection[int] = (),
) -> Attribution:
    """The one card whose connected client TUI can run a conversation in `cwd`, or why none.

    `source` is the payload's SessionStart source; `recorded` the directory
    the conversation's session was first recorded in (its transcript's
    session_meta), None when unknown; `moved` the pids of connected clients
    that may have taken a conversation into `cwd` unseen (marked, or marked
    now): they compete there like the clients working there.
    """
    if not cwd or not cwd.startswith("/"):
        return Attribution(NO_CWD, "the payload has no absolute cwd to match a client by")
    want = normalise(cwd)
    anyone = source not in FRESH_SOURCES and (recorded is None or normalise(recorded) == want)
    if anyone:
        # resumed in its own recorded directory: any TUI may have chosen "session directory"
        here = [c for c in clients if conversation_dir(c) is not None]
        where = f"connected (a {source or 'non-fresh'} conversation in {want} may be anyone's)"
    else:
        here = [c for c in clients if _can_run_in(c, want) or c.pid in moved]
        where = f"able to run in {want}"
    if not here:
        return Attribution(
            NO_CLIENT,
            f"none of the daemon's {len(clients)} connected codex client(s) runs in {want}",
        )
    movers_here = sorted(c.pid for c in here if c.pid in moved and not _can_run_in(c, want))
    moved_note = None
    if movers_here and not anyone:
        moved_note = (
            f"client(s) {', '.join(map(str, movers_here))} may have moved a conversation into "
            f"{want} (a session resumed there that no report attributed), so a match by "
            "directory proves nothing there while they stay connected"
        )
    members = [
        (
            f"codex client {client.pid}",
            client.lich,
            client.pid,
            None
            if client.unscanned is None
            else f"cannot tell whether it is connected (it {client.unscanned})",
        )
        for client in here
    ]
    return one_card(members, where, WORDS, f"{len(here)} codex clients", (MOVED, moved_note))


def one_card(
    members: Sequence[tuple[str, Mapping[str, str] | None, int | None, str | None]],
    where: str,
    words: Words,
    who: str,
    moved: tuple[AttributionDecision, str | None] | None = None,
) -> Attribution:
    """The one card every member names, or why none: the rule any shared process shares.

    `members` are (label, LICH_* or None if unreadable, pid, why it cannot be
    judged or None) of everything that may own the conversation (Codex's
    client TUIs; a Crush workspace's environment and its clients). A member
    outside lich, unjudgeable, with an unreadable or invalid environment, or
    a second card among them: nobody is named. `words` are the caller's
    decisions (WORDS here); `who` names the members as a group for the message
    ("2 codex clients"); `moved`, when its note is set, is the decision and
    reason that replace "several cards" (Codex: a client may have moved a
    conversation here).
    """
    found, outside, unreadable, invalid, several = words
    cards: dict[tuple[str, str, str], tuple[str, int | None]] = {}
    for label, lich, pid, problem in members:
        if problem is not None:
            return Attribution(unreadable, f"{label} {where}: {problem}")
        if lich is None:
            return Attribution(unreadable, f"{label} {where}: environment unreadable")
        card = lich.get("LICH_SESSION_ID")
        if not any(lich.get(key) for key in LICH_KEYS):
            # a client outside lich shares the directory: the conversation may be its own
            return Attribution(outside, f"{label} {where} is not in lich")
        env = LichEnv(lich)
        if not env.can_report:
            bad = [key for key in LICH_KEYS if not _valid(env, key)]
            return Attribution(
                invalid,
                f"{label} {where} (card {card!r}): missing or invalid {', '.join(bad)}",
            )
        assert env.card is not None and env.token is not None
        cards.setdefault((env.card, str(env.port), env.token), (label, pid))
    if len(cards) > 1:
        names = sorted({card for card, _, _ in cards})
        if moved is not None and moved[1] is not None:
            return Attribution(
                moved[0],
                f"{who} {where} belong to {len(cards)} different cards "
                f"({', '.join(names)}): {moved[1]}",
            )
        return Attribution(
            several,
            f"{who} {where} belong to {len(cards)} different cards "
            f"({', '.join(names)}): cannot tell whose conversation this is",
        )
    [(card, port, token)] = cards
    label, pid = cards[(card, port, token)]
    lich = {"LICH_SESSION_ID": card, "LICH_PORT": port, "LICH_TOKEN": token}
    return Attribution(found, f"card {card} from {label} {where}", lich, pid)


def _can_run_in(client: Client, want: str) -> bool:
    dirs = possible_dirs(client)
    return dirs is None or want in dirs


def _valid(env: LichEnv, key: str) -> bool:
    if key == "LICH_PORT":
        return env.port is not None
    if key == "LICH_TOKEN":
        return env.token is not None
    return env.card is not None
