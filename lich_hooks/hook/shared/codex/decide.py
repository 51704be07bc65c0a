"""Which lich card a Codex hook reports for: pure decisions over a process snapshot and the
daemon's log, whose hooks run with the first TUI's LICH_* (docs/harnesses.md, Codex)."""

from __future__ import annotations

from lich_hooks.hook.shared import core
from lich_hooks.hook.shared.core import OWN, UNKNOWN, Attribution, Runner, one_card

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from lich_hooks.hook.shared.core import AttributionDecision, Member, RunnerKind, Words

__all__ = ["OWN", "UNKNOWN", "Attribution", "Runner"]

CODEX_NAMES = ("codex", "codex.exe")
SWITCHERS = ("resume", "fork", "agents")

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


Client = core.Client


def switcher(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """`(subcommand, session id)`; any argument spelled so counts: a false one costs a report,
    a missed one a card."""
    args = list(argv[1:])
    if "--" in args:
        args = args[: args.index("--")]
    for index, arg in enumerate(args):
        if arg in SWITCHERS:
            rest = [a for a in args[index + 1 :] if not a.startswith("-")]
            named = rest[0] if rest and "--last" not in args else None
            return arg, named if named is not None and _is_uuid(named) else None
    return None


def _is_uuid(text: str) -> bool:
    parts = text.split("-")
    return [len(p) for p in parts] == [8, 4, 4, 4, 12] and all(
        c in "0123456789abcdefABCDEF" for c in "".join(parts)
    )


FOUND: AttributionDecision = "codex-daemon-card"
NO_CLIENT: AttributionDecision = "codex-daemon-no-client"
NOT_IN_LICH: AttributionDecision = "codex-daemon-client-outside-lich"
UNREADABLE: AttributionDecision = "codex-daemon-client-unreadable"
INVALID: AttributionDecision = "codex-daemon-client-invalid"
SEVERAL: AttributionDecision = "codex-daemon-several-cards"
UNACCOUNTED: AttributionDecision = "codex-daemon-peer-unaccounted"
NO_EVIDENCE: AttributionDecision = "codex-daemon-no-evidence"
SHARED_THREAD: AttributionDecision = "codex-daemon-thread-shared"
UNTIED: AttributionDecision = "codex-daemon-untied"
UNTRUSTED: AttributionDecision = "codex-daemon-log-untrusted"
WORDS: Words = (FOUND, NOT_IN_LICH, UNREADABLE, INVALID, SEVERAL)


def gate(clients: Sequence[Client], unaccounted: int = 0) -> Attribution | None:
    """The refusals no log can overturn, decided before the hook exits; None: the log decides.
    A connection no client read may be anyone's; with no lich card's client connected there
    is no card to name."""
    if unaccounted:
        return Attribution(
            UNACCOUNTED,
            f"{unaccounted} of the daemon's connections are held by no codex client this hook "
            "can read (another program, another user's, an unreadable or a departed process): "
            "cannot tell whose conversation this is",
        )
    if any(c.lich for c in clients):
        return None
    if clients:
        why = f"none of the {len(clients)} codex clients has a lich card's variables it can read"
        return Attribution(NOT_IN_LICH, why)
    return Attribution(NO_CLIENT, "no codex client is connected to the daemon")


# The daemon log's evidence (docs/harnesses.md, Codex, "Attribution from evidence"):
# The sender waits for the connect rows of TUIs started within twice this before the hook
# (a TUI writes its rows in its own 10 s batches), and reads connect rows this far past them.
CONNECT_WITHIN = 60.0
# A request another connection began shortly before the hook may be a resume of the hook's
# thread whose rows carrying the thread id come after the hook (0.16 s seen): each begun within
# REQUEST_SPAN before the hook must show its thread (its rows) before the sender decides, and
# one begun up to REQUEST_SPAN earlier still without them shows the span exceeded: refused.
REQUEST_SPAN = 10.0
Row = tuple[float, str, int]  # (time, rpc method, connection id)
Connect = tuple[float, int]  # (time, writer pid) of a TUI's `connected app-server platform` row
# A connection the daemon opened (evidence.opened): when it logged its `initialize`, its first
# request after that (inf: none yet), and what its first thread/start|resume|fork asked: STARTUP
# (a plain TUI's), the thread it resumed, "" (else), None (none, or a resume not shown yet).
Opened = tuple[float, float, str | None]
STARTUP = "startup"


# Why a live TUI is not tied (tie), for the run log, the person's line and doctor.
NO_CONNECT = "the window's connect is not in the daemon's log"
RECONNECTED = "the window connected before the daemon restarted"
NOT_YET = "the daemon's log does not show the window's start yet"  # this one may pass
GONE = "Codex's log no longer shows the connection the window opened"
TOGETHER = "another Codex client connected while the window did"
Tie = int | str  # a TUI's connection, or why it has none


def from_evidence(
    rows: Sequence[Row],
    clients: Sequence[Client],
    held: Mapping[int, Tie],
    seen: float,
    hook_started: float,
    pending: Sequence[Row] = (),
) -> Attribution:
    """The card whose live TUI holds the connection that started or resumed this thread
    (`rows`), or why none. `held`: pid -> tie; `seen`: the newest row read; `pending`:
    start/resume/fork requests other connections began that show no thread yet."""
    connections = {connection for _, _, connection in rows}
    if seen < hook_started or not rows:
        return Attribution(NO_EVIDENCE, "the daemon's log names no connection for this thread")
    if pending:
        return Attribution(
            NO_EVIDENCE,
            f"connections {sorted({c for _, _, c in pending})} began a thread request before the "
            "hook whose thread the log does not show yet: it may be this one",
        )
    if len(connections) > 1:
        return Attribution(
            SHARED_THREAD,
            f"connections {sorted(connections)} started or resumed this thread: "
            "any may be a client that left",
        )
    [connection] = connections
    tied = [c for c in clients if held[c.pid] == connection]
    if not tied:
        why = sorted({str(held[c.pid]) for c in clients if c.lich and isinstance(held[c.pid], str)})
        return Attribution(
            NO_EVIDENCE if why == [NOT_YET] else UNTIED,  # the log may yet show it: not untied
            f"connection {connection} started this thread and no live TUI is proven to hold "
            f"it ({'; '.join(why) or 'each is tied to another connection'})",
            cause=why[0] if len(why) == 1 and why != [NOT_YET] else None,
        )
    members: list[Member] = [(f"codex client {c.pid}", c.lich, c.pid, None) for c in tied]
    return one_card(members, f"holding connection {connection}", WORDS, "the TUI")


def connected_at(client: Client, connects: Sequence[Connect]) -> float | None:
    """Its own first connect row after its start (an earlier one is another process's)."""
    start = client.started
    return min(
        (t for t, pid in connects if pid == client.pid and start is not None and start <= t),
        default=None,
    )


def tie(
    client: Client,
    seen: float,
    since: float,
    connects: Sequence[Connect],
    opened: Mapping[int, Opened],
    floor: float,
    remembered: Mapping[tuple[int, float], int],
) -> Tie:
    """The connection a live TUI holds, or why it cannot be known. A TUI opens its session's
    connection and waits for an answer on it before it logs `connected` (Codex's source): it is
    among those the daemon initialized in [its start, its connect] (its window) that asked
    anything; alone there, it is the TUI's, beside others it is the one whose first thread
    request is of the TUI's kind. A wider window would only refuse more: the tie is
    exact because the window holds it (the log read through the connect, `seen`; whole since
    the start, `floor`; the TUI's own connect row). `remembered`: (pid, connect) -> connection,
    proven earlier in the daemon's life."""
    connect = connected_at(client, connects)
    if connect is None:
        return NO_CONNECT  # none of its own (or too late: a first start copying the daemon)
    if (client.pid, connect) in remembered:
        return remembered[(client.pid, connect)]
    if connect < since:
        return RECONNECTED  # it reconnected after a restart, which opens no window
    start = client.started
    assert start is not None  # connected_at found a connect after it
    if seen < connect:
        return NOT_YET  # the log is not read through its window
    window = [
        c for c, (born, asked, _) in opened.items() if start <= born <= connect and asked <= seen
    ]
    if floor >= start or not window:
        return GONE  # rows of its window may be pruned
    if len(window) == 1:
        return window[0]
    # its kind: a plain TUI's startup thread, the thread `codex resume <id>` names; `codex fork`,
    # `agents`, a picker or `--last` have none to tell
    switched = switcher(client.argv)
    want = STARTUP if switched is None else switched[1] if switched[0] == "resume" else None
    if want is None:
        return TOGETHER
    firsts = [opened[c][2] for c in window]
    if None in firsts:
        # its own first request may be the one not shown; a connection that never sends one
        # (doctor, `codex agents`) would keep it so: past REQUEST_SPAN that is the cause said
        return NOT_YET if seen < connect + REQUEST_SPAN else TOGETHER
    hits = [c for c in window if opened[c][2] == want]
    return hits[0] if len(hits) == 1 else TOGETHER
