"""Which lich card a Codex hook reports for: pure decisions over a process snapshot and the
daemon's log, whose hooks run with the first TUI's LICH_* (docs/harnesses.md, Codex)."""

from __future__ import annotations

from lich_hooks.hook.shared import core
from lich_hooks.hook.shared.core import OWN, UNKNOWN, Attribution, Runner, normalise, one_card

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from lich_hooks.hook.shared.core import AttributionDecision, Member, RunnerKind, Words

__all__ = ["OWN", "UNKNOWN", "Attribution", "Runner", "normalise", "one_card"]

CODEX_NAMES = ("codex", "codex.exe")
SWITCHERS = ("resume", "fork", "agents")
# A new conversation in the TUI's directory; any other source may continue one resumed elsewhere.
FRESH_SOURCES = ("startup", "clear")

DAEMON: RunnerKind = "daemon"  # runner(): the shared app-server runs it


def is_codex(argv: Sequence[str]) -> bool:
    """The native binary, not npm's node wrapper."""
    if not argv:
        return False
    name = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name in CODEX_NAMES


def is_app_server(argv: Sequence[str]) -> bool:
    return is_codex(argv) and len(argv) > 1 and argv[1] == "app-server"


def runner(ancestors: Sequence[tuple[int, Sequence[str]]] | None) -> Runner:
    return core.nearest(ancestors, (is_app_server, DAEMON, "codex app-server"), (is_codex, "codex"))


class Client(core.Client):
    """`resumed_dir`: the recorded directory of the session `codex resume|fork <id>` names."""

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
    """`(subcommand, session id)`; any argument spelled so counts: a false one costs a report,
    a missed one a card."""
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
    """None: any directory."""
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
    """The one card whose client can run a conversation in `cwd` (`recorded`: the session's
    recorded directory, if known)."""
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
    """An unread connection or another card's TUI refuses: either may own the conversation."""
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


# The daemon log's evidence: docs/harnesses.md, Codex, "Attribution from evidence".
CONNECT_WITHIN = 60.0  # a TUI's connect row is looked for this long after its start
REQUEST_AFTER = 1.0  # its startup request follows its connect row within this (0.15 s seen)
# A resume's thread rows can follow its hook (0.16 s seen): with another connection's request
# within REQUEST_SPAN before the hook, wait until the log runs AFTER_HOOK past it.
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
    """The card whose live TUI's connection started or resumed this thread (`rows`), or why none.

    `seen`: the newest row read; `since`: the daemon's start; `own`: pid -> its connect times;
    `requests`: start/resume/fork requests as logged when they began (no thread id yet)."""
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
    """The one startup request between a plain TUI's start and REQUEST_AFTER past its connect."""
    connect = connected_at(client, own)
    if client.started is None or switcher(client.argv) is not None or connect is None:
        return None  # no startup request of its own in the log
    if connect < since:
        return None  # reconnected after a restart
    if seen < connect + REQUEST_AFTER:
        return None  # its own request may not be written yet
    near = {c for t, _, c in startups if client.started <= t <= connect + REQUEST_AFTER}
    return near.pop() if len(near) == 1 else None
