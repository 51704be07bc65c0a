"""The attribution core both shared processes use: who runs the hook, and one card or none;
each harness's own rules stay in its folder (docs/harnesses.md)."""

from __future__ import annotations

from lich_hooks.base.lichenv import LichEnv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Literal

    from lich_hooks.hook.outcome import Context, Outcome
    from lich_hooks.hook.payload import Payload

    RunnerKind = Literal["own", "daemon", "server", "unknown"]
    # Crush's guard mark for (card, conversation), or None where the shell would not test it.
    Guard = Callable[[str, str], str | None]
    # The run log's `decision` under a shared process (docs/harnesses.md)
    AttributionDecision = Literal[
        "codex-daemon-card",
        "codex-daemon-no-client",
        "codex-daemon-client-outside-lich",
        "codex-daemon-client-unreadable",
        "codex-daemon-client-invalid",
        "codex-daemon-several-cards",
        "codex-daemon-peer-unaccounted",
        "codex-daemon-no-evidence",
        "codex-daemon-thread-shared",
        "codex-daemon-untied",
        "codex-daemon-log-untrusted",
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
        "crush-server-peer-unaccounted",
        "crush-server-unsupported",
        "crush-server-probe-failed",
    ]
    # one_card()'s words: found, outside lich, unreadable, invalid, several cards
    Words = tuple[AttributionDecision, ...]
    # one_card()'s members: (label, LICH_* or None if unreadable, pid, why unjudgeable or None)
    Member = tuple[str, Mapping[str, str] | None, int | None, str | None]

LICH_KEYS = ("LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID")

OWN: RunnerKind = "own"  # the harness runs the hook as its child (or none does)
UNKNOWN: RunnerKind = "unknown"  # the ancestry could not be read: cannot tell which


class Card:
    """Which card a run under a shared process reports for, as one answer the job reads by its
    fields: `refusal` (an Outcome: report nothing), or `later` (the detached sender asks it,
    from evidence it must wait for: Codex's daemon log; `say`: the hook's stdout meanwhile),
    or else `env`, the hook's own card when `own`. `guard`: the mark the registered guard
    tests for a reported conversation (local Crush only: base/homes.py CRUSH_MARKS)."""

    __slots__ = ("env", "guard", "later", "own", "refusal", "say")

    def __init__(
        self,
        env: LichEnv | None = None,
        *,
        own: bool = False,
        refusal: Outcome | None = None,
        later: Callable[[], Card] | None = None,
        guard: Guard | None = None,
        say: bytes | None = None,
    ) -> None:
        self.env = env
        self.say = say
        self.own = own
        self.refusal = refusal
        self.later = later
        self.guard = guard


class Runner:
    __slots__ = ("kind", "pid", "why")

    def __init__(self, kind: RunnerKind, why: str, pid: int | None = None) -> None:
        self.kind = kind
        self.why = why
        self.pid = pid


def nearest(
    ancestors: Sequence[tuple[int, Sequence[str]]] | None,
    shared: tuple[Callable[[Sequence[str]], bool], RunnerKind, str],
    own: tuple[Callable[[Sequence[str]], bool], str],
) -> Runner:
    """The nearest of the harness's processes above the hook decides who runs it."""
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
    """A harness process connected to the shared process: `cwd`, `lich` (its LICH_*) None when
    unreadable; `started`: its start, in seconds since the epoch (Codex); `held`: the connections
    the server accepted that it holds, `uid` None: gone (Crush)."""

    __slots__ = ("argv", "cwd", "held", "lich", "pid", "started", "uid")

    def __init__(
        self, pid: int, argv: Sequence[str], cwd: str | None, lich: Mapping[str, str] | None
    ) -> None:
        self.pid = pid
        self.argv = list(argv)
        self.cwd = cwd
        self.lich = lich
        self.started: float | None = None
        self.held: set[int] = set()
        self.uid: int | None = None


class Attribution:
    """The card a shared-process hook reports for (`lich`, None on a refusal) and why."""

    __slots__ = ("cause", "client", "decision", "lich", "why")

    def __init__(
        self,
        decision: AttributionDecision,
        why: str,
        lich: Mapping[str, str] | None = None,
        client: int | None = None,
        cause: str | None = None,
    ) -> None:
        self.decision = decision
        self.why = why
        self.lich = lich
        self.client = client
        self.cause = cause  # a refusal's cause for a person, where `why` is not one

    def __repr__(self) -> str:
        return f"Attribution({self.decision!r}, {self.why!r}, client={self.client})"


def normalise(path: str) -> str:
    """Lexical only: the probe resolved symlinks."""
    import posixpath

    return posixpath.normpath(path)


def flag_dir(client: Client, short: str, long: str) -> str | None:
    """Its `short`/`long` DIR flag (relative to its cwd), else its cwd; None: the cwd is gone."""
    if client.cwd is None:
        return None
    args = client.argv[1:]
    for index, arg in enumerate(args):
        if arg == "--":
            break
        value = None
        if arg in (short, long) and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith(long + "="):
            value = arg[len(long) + 1 :]
        elif arg.startswith(short) and len(arg) > 2 and not arg.startswith("--"):
            value = arg[2:].removeprefix("=")
        if value is not None:
            return normalise(value if value.startswith("/") else f"{client.cwd}/{value}")
    return normalise(client.cwd)


def one_card(
    members: Sequence[Member],
    where: str,
    words: Words,
    who: str,
) -> Attribution:
    """The one card every member names; anyone outside lich, unjudgeable, unreadable, invalid,
    or a second card: nobody."""
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
            values = (env.port, env.token, env.card)  # LICH_KEYS' order
            bad = [key for key, value in zip(LICH_KEYS, values, strict=True) if value is None]
            return Attribution(
                invalid,
                f"{label} {where} (card {card!r}): missing or invalid {', '.join(bad)}",
            )
        assert env.card is not None and env.token is not None
        cards.setdefault((env.card, str(env.port), env.token), (label, pid))
    if len(cards) > 1:
        names = sorted({card for card, _, _ in cards})
        return Attribution(
            several,
            f"{who} {where} belong to {len(cards)} different cards ({', '.join(names)}): "
            "cannot tell whose conversation this is",
        )
    [(card, port, token)] = cards
    label, pid = cards[(card, port, token)]
    lich = {"LICH_SESSION_ID": card, "LICH_PORT": port, "LICH_TOKEN": token}
    return Attribution(found, f"card {card} from {label} {where}", lich, pid)


def shared_runner(
    ctx: Context, runner: Runner, harness_name: Literal["codex", "crush"]
) -> tuple[int, Payload] | Outcome | None:
    """None (the hook's own card), a refusal, or the shared process's pid and the payload."""
    from lich_hooks.hook.outcome import Outcome

    if runner.kind == OWN:
        return None
    ctx.log.set(**{f"{harness_name}_runner": runner.why})
    if runner.kind == UNKNOWN:
        ctx.log.debug(f"not reporting: {runner.why}")
        return Outcome(f"{harness_name}-runner-unknown")
    payload = ctx.payload()
    if payload is None:
        return Outcome("bad-input")
    assert runner.pid is not None
    return runner.pid, payload


def attributed(ctx: Context, found: Attribution, started: float) -> LichEnv | Outcome:
    import time

    from lich_hooks.hook.outcome import Outcome

    ctx.log.set(attribution=found.why, attribution_ms=round((time.monotonic() - started) * 1000, 2))
    ctx.log.debug(found.why)
    if found.lich is None:
        return Outcome(found.decision)
    return LichEnv(found.lich)
