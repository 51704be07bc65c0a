"""Which lich card a Codex hook reports for: pure decisions over a process snapshot.

Codex's interactive TUI (0.157 and later) runs every hook inside one shared
`codex app-server … --managed-daemon` per CODEX_HOME. That daemon was started
by whichever TUI came first and carries that TUI's environment, so under it
the hook's own LICH_* name the first card, not the card whose conversation
fired the hook. Nothing from the client TUI (pid, environment, terminal)
reaches the hook or its payload; the payload's `cwd` is the only link.

So the decision has three steps, each a function of data the probe recorded
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
3. `attribute(clients, cwd, source, recorded)`: that card, only if every
   client connected to the daemon is that card's (below).

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

A TUI can also move without any trace in its process or a hook: `/resume`
of a session recorded in another directory, "session directory", then
`/new` before any turn fires SessionStart only for the new conversation, in
the other directory, where another card's TUI works. The daemon holds the
resumed session for a while, but may unload it before that first turn
(Codex's `thread_unload_delay_secs` is the user's, and a daemon restart
unloads everything), and then nothing the hook can read says the TUI ever
left its directory. A cwd match therefore proves whose conversation it is
only when no other card's TUI is connected: `attribute` names a card only
when every connected client is that card's. The proof is a model of the
daemon and its TUIs over every interleaving (tests/shared_process/).

docs/harnesses.md (Codex) explains the daemon and these limits to users.
"""

from __future__ import annotations

from lich_hooks.hook.shared import core
from lich_hooks.hook.shared.core import OWN, UNKNOWN, Attribution, Runner, normalise, one_card

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from lich_hooks.hook.shared.core import AttributionDecision, Member, RunnerKind, Words

__all__ = ["OWN", "UNKNOWN", "Attribution", "Runner", "normalise", "one_card"]

CODEX_NAMES = ("codex", "codex.exe")
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
    resume|fork <id>` names, when the probe found it.
    """

    __slots__ = ("resumed_dir",)

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


def conversation_dir(client: Client) -> str | None:
    """The directory the client's conversation runs in: `-C/--cd DIR` if given, else its cwd.

    Codex starts the thread in `--cd`'s directory without changing its own
    working directory, so the flag wins. A relative DIR is taken from the cwd.
    """
    return core.flag_dir(client, "-C", "--cd")


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
UNACCOUNTED: AttributionDecision = "codex-daemon-peer-unaccounted"
NO_CWD: AttributionDecision = "codex-daemon-no-cwd"
WORDS: Words = (FOUND, NOT_IN_LICH, UNREADABLE, INVALID, SEVERAL)


def choose(
    clients: Sequence[Client],
    cwd: str | None,
    source: str | None = None,
    recorded: str | None = None,
) -> Attribution:
    """The one card whose connected client TUI can run a conversation in `cwd`, or why none.

    `source` is the payload's SessionStart source; `recorded` the directory
    the conversation's session was first recorded in (its transcript's
    session_meta), None when unknown.
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
        here = [c for c in clients if _can_run_in(c, want)]
        where = f"able to run in {want}"
    if not here:
        return Attribution(
            NO_CLIENT,
            f"none of the daemon's {len(clients)} connected codex client(s) runs in {want}",
        )
    return one_card(_members(here), where, WORDS, f"{len(here)} codex clients")


def attribute(
    clients: Sequence[Client],
    cwd: str | None,
    source: str | None = None,
    recorded: str | None = None,
    unaccounted: int = 0,
) -> Attribution:
    """The whole rule for one SessionStart under the daemon, over what the probe saw.

    Every connection of the daemon must be a client read here (`unaccounted`:
    how many are not: held by another program, another user's or an unreadable
    process, or closed a moment ago; any of them may own the conversation).
    Then `choose`'s card, and only while no other card's TUI is connected: any
    TUI can take its conversation into any directory with no trace left
    (resume there, `/new`, the daemon unloads what it resumed), so a second
    card connected may own any conversation. Pure: the model in
    tests/shared_process runs it at every SessionStart.
    """
    if unaccounted:
        return Attribution(
            UNACCOUNTED,
            f"{unaccounted} of the daemon's connections are held by no codex client this hook "
            "can read (another program, another user's, an unreadable or a departed process): "
            "cannot tell whose conversation this is",
        )
    found = choose(clients, cwd, source, recorded)
    if found.lich is None:
        return found
    everyone = one_card(
        _members(clients),
        f"connected to the daemon as a conversation starts in {normalise(str(cwd))}",
        WORDS,
        f"{len(clients)} codex clients",
        (
            MOVED,
            "any of them may have moved a conversation here unseen (`/resume` of a session "
            "recorded here, then `/new`; the daemon may unload what was resumed before the "
            "first turn), so no directory proves whose conversation this is while TUIs of "
            "several cards are connected",
        ),
    )
    return found if everyone.lich is not None else everyone


def _members(clients: Sequence[Client]) -> list[Member]:
    return [(f"codex client {client.pid}", client.lich, client.pid, None) for client in clients]


def _can_run_in(client: Client, want: str) -> bool:
    dirs = possible_dirs(client)
    return dirs is None or want in dirs
