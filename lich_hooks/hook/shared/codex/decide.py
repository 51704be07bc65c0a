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

from lich_hooks.hook.shared import core
from lich_hooks.hook.shared.core import OWN, UNKNOWN, Attribution, Runner, normalise, one_card

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from lich_hooks.hook.shared.core import AttributionDecision, RunnerKind, Words

__all__ = ["OWN", "UNKNOWN", "Attribution", "Runner", "normalise", "one_card"]

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

# runner() verdict beside core's OWN and UNKNOWN
DAEMON: RunnerKind = "daemon"  # the shared app-server runs it: find the card among its clients


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


def runner(ancestors: Sequence[tuple[int, Sequence[str]]] | None) -> Runner:
    """Classify the hook's ancestry, nearest first, as the probe read it (None: unreadable).

    The nearest codex decides: a TUI's own hook (`--no-daemon`) has no daemon
    above it, and a codex started from a tool command under the daemon has the
    daemon further up but runs its own hooks as its children.
    """
    return core.nearest(ancestors, (is_app_server, DAEMON, "codex app-server"), (is_codex, "codex"))


class Client(core.Client):
    """One codex process connected to the daemon, as the probe recorded it (core.Client).

    `resumed_dir` is the recorded directory of the session a `codex
    resume|fork <id>` names, when the probe found it. `unscanned` says why its
    open files were not read (then it may or may not be connected: it competes
    for its directory and is never named).
    """

    __slots__ = ("resumed_dir", "unscanned")

    def __init__(
        self,
        pid: int,
        argv: Sequence[str],
        cwd: str | None,
        lich: Mapping[str, str] | None,
        resumed_dir: str | None = None,
    ) -> None:
        super().__init__(pid, argv, cwd, lich)
        self.resumed_dir = resumed_dir
        self.unscanned: str | None = None


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


def _can_run_in(client: Client, want: str) -> bool:
    dirs = possible_dirs(client)
    return dirs is None or want in dirs
