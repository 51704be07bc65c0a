"""When each worker Stop that read the transcript began, per session and route: a reply made
before the previous Stop began belongs to that Stop's turn or an earlier one, never to this one
(docs/worker-answer.md, "The transcript fallback")."""

from __future__ import annotations

import math

from lich_hooks.hook import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.hook.state import Where

PARTS = ("stops",)  # its row in state/prune.py's RULES
LIMIT = 64


def swap(where: Where, name: str, now: float) -> tuple[float | None, bool]:
    """(the previous Stop's time, or None; whether `now` is kept for the next Stop). Read before
    the write: a run of the same route never runs beside another of the same session, as Claude
    Code waits for a Stop's hooks before the next turn."""
    found = state.read(where, PARTS, name, LIMIT)
    try:
        previous = None if found is None else float(found.decode("ascii"))
    except ValueError:
        previous = None  # not a record this module wrote
    if previous is not None and not math.isfinite(previous):
        previous = None
    try:
        state.write(where, PARTS, name, repr(now).encode("ascii"))
    except OSError:
        return previous, False
    return previous, True
