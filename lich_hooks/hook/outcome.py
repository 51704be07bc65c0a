"""A job reads a `Context` and returns an `Outcome`; it never prints, sends or exits, so
the guarantees live in one place (hook.run)."""

from __future__ import annotations

from lich_hooks.hook.payload import Payload, loads_object, read_stdin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from lich_hooks.base.harnesses import Route
    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.base.runlog import RunLog


class Context:
    """One hook run's inputs; the payload is read only when a job asks for it."""

    __slots__ = (
        "_payload",
        "_read",
        "env",
        "environ",
        "event",
        "log",
        "provider",
        "route",
        "stdin_fd",
    )

    def __init__(
        self,
        event: str,
        provider: str,
        route: Route,
        environ: Mapping[str, str],
        env: LichEnv,
        log: RunLog,
        stdin_fd: int = 0,
    ) -> None:
        self.event = event
        self.provider = provider
        self.route = route  # harness.py's table entry for (provider, event)
        self.environ = environ
        self.env = env
        self.log = log
        self.stdin_fd = stdin_fd
        self._read = False
        self._payload: Payload | None = None

    def payload(self) -> Payload | None:
        if not self._read:
            self._read = True
            raw = read_stdin(self.stdin_fd)
            if raw is None:
                self.log.set(bad_input="stdin unreadable, too large or not closed in time")
                return None
            data = loads_object(raw)
            if data is None:
                self.log.set(bad_input=f"not a JSON object ({len(raw)} bytes)")
                return None
            self._payload = Payload(data)
        return self._payload


# The decision of an outcome whose `later` waits seconds for evidence (Codex's daemon log): with
# no detached sender to wait in, hook.run drops it rather than keep the harness waiting.
PENDING = "evidence-pending"


class Outcome:
    """A job's decision (a word for the log), verdict and report; `env`: the card reported for
    when it is not the hook's own."""

    __slots__ = (
        "body",
        "decision",
        "endpoint",
        "env",
        "later",
        "on_end",
        "on_taken",
        "send_by",
        "stdout",
    )

    def __init__(
        self,
        decision: str,
        *,
        stdout: bytes | None = None,
        endpoint: str | None = None,
        body: dict[str, object] | None = None,
        on_taken: Callable[[], None] | None = None,
        on_end: Callable[[], None] | None = None,
        env: LichEnv | None = None,
        send_by: float | None = None,
        later: Callable[[], Outcome] | None = None,
    ) -> None:
        self.decision = decision
        # the rest of the decision, made in the detached sender: Codex's card from the
        # daemon's log, a SessionStart's claim and records
        self.later = later
        self.env = env
        self.stdout = stdout
        self.endpoint = endpoint
        self.body = body
        self.on_taken = on_taken  # after lich's 204, in the sender
        self.on_end = on_end  # once the send ends, whatever the outcome (after on_taken)
        self.send_by = send_by  # time.time() the send must end by (its claim's life), if any
