"""The per-user state directory, by layer (docs/troubleshooting.md, "What lich-hook writes").

- location.py  where: the one rule for HOME, the state directory's path, file names for ids
- store.py     the directory itself: made without chmod-ing what existed, checked to be
               the user's, its records read and written through safefile.Dir
- prune.py     the table of what is pruned, run off the harness's wait

The records live beside the jobs that keep them: jobs/session_record.py (the
last id each card reported, the report in flight) and jobs/agent_cards/record.py
(the workers a card opened).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def prune_after(environ: Mapping[str, str], inline: bool = False) -> None:
    """End of a run that may have written a record: prune off the wait if one is due.

    Callers reach this through sys.modules["lich_hooks.state"]: a run that
    never loaded the state wrote nothing, and must not pay for the import.
    """
    import time

    from lich_hooks.state import prune, store

    if not store.WRITTEN:
        return
    try:
        prune.after_run(environ, time.time(), inline)
    except Exception:  # noqa: S110 - best-effort state, never the turn
        pass
