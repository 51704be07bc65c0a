"""Which lich card a Codex hook reports for: pure decisions over a process snapshot and the
daemon's log.

Codex's shared app-server daemon runs every TUI's hooks with the first TUI's environment, so
the hook's own LICH_* are never trusted under it. `runner` finds who runs the hook,
`attribute` the refusals decided at once (a peer no client read), `from_evidence` the card
whose TUI is tied to the connection that started the thread. Why, and each limit:
docs/harnesses.md (Codex); the proof is the model in tests/shared_process/.
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

# runner() verdict beside core's OWN and UNKNOWN
DAEMON: RunnerKind = "daemon"  # the shared app-server runs it: find the card among its clients


def is_codex(argv: Sequence[str]) -> bool:
    """A process whose executable is named codex (the native binary, not npm's node wrapper)."""
    if not argv:
        return False
    name = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name in CODEX_NAMES


def is_app_server(argv: Sequence[str]) -> bool:
    """`codex app-server …`: any app-server counts as shared, its environment proves nothing."""
    return is_codex(argv) and len(argv) > 1 and argv[1] == "app-server"


def runner(ancestors: Sequence[tuple[int, Sequence[str]]] | None) -> Runner:
    """Classify the hook's ancestry, nearest first (None: unreadable); the nearest codex decides."""
    return core.nearest(ancestors, (is_app_server, DAEMON, "codex app-server"), (is_codex, "codex"))


class Client(core.Client):
    """One codex process connected to the daemon (core.Client); `resumed_dir`: the recorded
    directory of the session a `codex resume|fork <id>` names, when the probe found it.
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
    """`-C/--cd DIR` if given (Codex starts the thread there without a chdir), else the cwd."""
    return core.flag_dir(client, "-C", "--cd")


def switcher(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """`(subcommand, session id)` for `codex resume|fork [<uuid>]` and `codex agents`, else None.

    Any argument spelled so counts: a false switcher costs a report, a missed one a card.
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
NO_EVIDENCE: AttributionDecision = "codex-daemon-no-evidence"
SHARED_THREAD: AttributionDecision = "codex-daemon-thread-shared"
UNTIED: AttributionDecision = "codex-daemon-untied"
WORDS: Words = (FOUND, NOT_IN_LICH, UNREADABLE, INVALID, SEVERAL)


def choose(
    clients: Sequence[Client],
    cwd: str | None,
    source: str | None = None,
    recorded: str | None = None,
) -> Attribution:
    """The one card whose connected client TUI can run a conversation in `cwd`, or why none.

    `source`: the SessionStart source; `recorded`: the session's recorded directory, if known.
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

    Any connection not read as a client (`unaccounted`) or another card's TUI connected
    refuses: either may own the conversation (docs/harnesses.md).
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


# The daemon log's evidence (docs/harnesses.md, Codex, "Attribution from evidence").
# A plain TUI logs `connected app-server platform` under its own pid, then its session
# connection sends `thread/start` id `startup-thread-start-<uuid>` (0.01-0.15 s later, n=12).
CONNECT_WITHIN = 60.0  # a TUI's connect row is looked for this long after its start
REQUEST_AFTER = 1.0  # its startup request follows its connect row within this
# A resume's rows that carry the thread id can come after the hook it set off (0.16 s seen):
# when another connection asked to start, resume or fork a thread within REQUEST_SPAN before
# the hook, the log is read only once the daemon has written AFTER_HOOK past it.
AFTER_HOOK = 1.0
REQUEST_SPAN = 10.0
Row = tuple[float, str, int]  # (time, rpc method, connection id)


def from_evidence(
    rows: Sequence[Row],
    startups: Sequence[Row],
    clients: Sequence[Client],
    seen: float,
    hook_started: float,
    since: float,
    own: Mapping[int, Sequence[float]],
    requests: Sequence[Row] = (),
) -> Attribution:
    """The card whose live TUI's connection started or resumed this thread, or why none.

    `rows`: the thread's start/resume/fork requests (any time: more can only refuse);
    `startups`: every TUI startup request logged from the clients' starts; `seen`: the
    newest daemon row read; `since`: the daemon's start; `own`: pid -> when each client
    logged its connect; `requests`: start/resume/fork requests as logged when they began
    (no thread id yet); `clients` carry `started` as wall-clock seconds.
    """
    connections = {connection for _, _, connection in rows}
    others = {c for t, _, c in requests if hook_started - REQUEST_SPAN <= t} - connections
    if seen < hook_started + (AFTER_HOOK if others else 0) or not rows:
        return Attribution(NO_EVIDENCE, "the daemon's log names no connection for this thread")
    if len(connections) > 1:
        return Attribution(
            SHARED_THREAD,
            f"connections {sorted(connections)} started or resumed this thread: "
            "any may be a client that left",
        )
    [connection] = connections
    tied = [c for c in clients if tie(c, startups, seen, since, own) == connection]
    if len(tied) != 1:
        return Attribution(
            UNTIED,
            f"connection {connection} started this thread and no one live TUI is proven to hold it",
        )
    return one_card(_members(tied), f"holding connection {connection}", WORDS, "the TUI")


def connected_at(client: Client, own: Mapping[int, Sequence[float]]) -> float | None:
    """When a client first logged its connect after its start (None: not in the log)."""
    start = client.started
    found = [t for t in own.get(client.pid, ()) if start is not None and start <= t]
    return min(found) if found and min(found) <= (start or 0) + CONNECT_WITHIN else None


def tie(
    client: Client,
    startups: Sequence[Row],
    seen: float,
    since: float,
    own: Mapping[int, Sequence[float]],
) -> int | None:
    """The connection a plain TUI opened at its start: the one startup request logged between
    its start and REQUEST_AFTER past its connect (its own is among them). A connect before the
    daemon's start went to another daemon: a reconnect sends no startup request."""
    connect = connected_at(client, own)
    if client.started is None or switcher(client.argv) is not None or connect is None:
        return None  # no startup request of its own in the log
    if connect < since:
        return None  # reconnected after a restart
    if seen < connect + REQUEST_AFTER:
        return None  # its own request may not be written yet
    near = {c for t, _, c in startups if client.started <= t <= connect + REQUEST_AFTER}
    return near.pop() if len(near) == 1 else None
