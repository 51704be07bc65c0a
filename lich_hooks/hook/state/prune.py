"""Keeping the state directory bounded: one table of what is pruned (RULES), run off the harness's
wait at most every PRUNE_EVERY seconds; what it holds whatever the directory looks like is
docs/troubleshooting.md's "What lich-hook writes"."""

from __future__ import annotations

import os

from lich_hooks.base.safefile import Dir, is_dir
from lich_hooks.hook import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    # (directory, max age in seconds, newest kept, one directory per card, names spared)
    Rule = tuple[str, float, int, bool, tuple[str, ...]]

PRUNE_EVERY = 3600.0  # seconds between two prunes; the marker's mtime says when
PRUNE_MARKER = ".pruned"
EMPTY_CARD_SECONDS = 60.0  # a card directory left empty is kept this long (a writer may be in it)
DAY = 86400.0
MINE = float("inf")  # the "when" of a record this process wrote

# Every record directory, the module that writes it, and its rule: entries older than the age go,
# and all but the newest `keep`; a nested directory holds one directory per card, counted together,
# and a card's directory goes once only its spared names are left. A module that writes records
# names its directory here (tests/state holds each writer to a row), so this floor never imports the
# modules above it. A worker's record past this age is pruned whether or not it still runs, so the
# status line does not read it (agent_cards/record.py).
WORKERS_AGE = 14 * DAY

RULES: tuple[Rule, ...] = (
    # hook/jobs/session_record.py: a card whose record went simply reports again
    ("reported", 30 * DAY, 200, False, ()),
    # the same: a report's claim, left behind only by a sender killed hard
    ("sending", 60.0, 200, False, ()),
    # the same: the Crush guard's marks (a mark gone costs one Python start, never a report)
    ("crush-reported", 30 * DAY, 200, False, ()),
    # the same: which card a conversation under a crush server went to (a record gone
    # costs one attribution more, never a report)
    ("served", 30 * DAY, 200, False, ()),
    # hook/jobs/agent_cards/record.py: two weeks, the newest 200 over every card, then
    # the card directories left without one (".checked": the status line's last look)
    ("workers", WORKERS_AGE, 200, True, (".checked",)),
    # human/settings/install_record.py: without its record, uninstall falls back to
    # "an empty container without a comment goes"
    ("installed", 365 * DAY, 200, False, ()),
    # written by releases before the Codex attribution stopped needing memory between
    # hooks (docs/harnesses.md, Codex): emptied whatever its age
    ("codex-daemon", 0.0, 0, False, ()),
    # hook/claim.py: which of two routes acts on one event; useless after 10 s
    ("claims", 3600.0, 2000, False, ()),
)


def after_run(
    environ: Mapping[str, str], now: float, inline: bool = False, wanted: bool = False
) -> None:
    """Prune if this process wrote a record (or `wanted`: a reader found more records than it reads)
    and the last prune is PRUNE_EVERY old.

    Detached (its own process, the harness's pipes dropped) unless `inline`: the caller is already
    off the harness's wait. Best-effort: errors are swallowed, and where fork is missing or fails
    nothing is pruned this time."""
    try:
        _after_run(environ, now, inline, wanted)
    except Exception:  # noqa: S110 - best-effort state, never the turn
        pass


def _after_run(environ: Mapping[str, str], now: float, inline: bool, wanted: bool) -> None:
    if not (state.WRITTEN or wanted) or not due(environ, now):
        return
    if inline:
        _prune_and_log(environ, now)
        return
    from lich_hooks.hook import detach

    pid = detach.fork()
    if pid != 0:
        return
    try:
        _prune_and_log(environ, now)
    finally:
        os._exit(0)


def _prune_and_log(environ: Mapping[str, str], now: float) -> None:
    """A prune that removed something writes its own LICH_HOOK_LOG line (event `prune`)."""
    import time

    from lich_hooks.base.runlog import RunLog

    started = time.monotonic()
    removed = maybe_prune(environ, now)
    if removed:
        log = RunLog(environ, started)
        log.set(event="prune", decision="pruned", removed=removed, prune_ms=log.elapsed_ms())
        log.write()


def due(environ: Mapping[str, str], now: float) -> bool:
    """One lstat: is the marker missing, PRUNE_EVERY old, or in the future?"""
    try:
        root = state.open_root(environ, create=False)
    except OSError:
        return False
    try:
        marker = root.lstat(PRUNE_MARKER)
    finally:
        root.close()
    return marker is None or not 0 <= now - marker.st_mtime < PRUNE_EVERY


def maybe_prune(environ: Mapping[str, str], now: float) -> int:
    """Prune when due; how many entries went (0 when not due or on any error)."""
    try:
        root = state.open_root(environ, create=False)
    except OSError:
        return 0
    try:
        marker = root.lstat(PRUNE_MARKER)
        if marker is not None and 0 <= now - marker.st_mtime < PRUNE_EVERY:
            return 0
        root.write(PRUNE_MARKER, b"")  # first: a parallel run sees it and does not prune too
        return prune(root, now)
    except OSError:
        return 0
    finally:
        root.close()


def prune(root: Dir, now: float, rules: tuple[Rule, ...] | None = None) -> int:
    """Apply every rule under `root`; returns how many entries went.

    Stray temporary files (a writer killed between create and rename) go with their directory's
    other old entries."""
    removed = 0
    for name, max_age, keep, nested, spared in RULES if rules is None else rules:
        try:
            directory = root.sub(name)
        except OSError:
            continue
        try:
            if nested:
                removed += _prune_nested(directory, (name,), now, max_age, keep, spared)
            else:
                dated = [(when, "", entry) for when, entry in _files(directory, now, (name,), ())]
                removed += _drop(directory, None, dated, now, max_age, keep)
        finally:
            directory.close()
    return removed


def _files(
    directory: Dir, now: float, parts: tuple[str, ...], spared: tuple[str, ...]
) -> list[tuple[float, str]]:
    """(when, name) of every entry that is not a directory; future mtimes count as now.

    What this process wrote counts as newer than everything (MINE): it is kept and counted, never
    this run's to remove."""
    found = []
    for name in directory.names():
        if name in spared:
            continue
        if (parts, name) in state.WRITTEN:
            found.append((MINE, name))
            continue
        info = directory.lstat(name)
        if info is not None and not is_dir(info.st_mode):
            found.append((min(info.st_mtime, now), name))
    return found


def _drop(
    directory: Dir | None,
    parent: Dir | None,
    dated: list[tuple[float, str, str]],
    now: float,
    max_age: float,
    keep: int,
) -> int:
    """Unlink the entries older than `max_age` and all but the newest `keep`.

    `dated` holds (when, card, name): with `parent`, each card's directory is opened under it only
    while its entries are removed, one at a time; without, every entry is in `directory`."""
    dated.sort(key=lambda item: item[0], reverse=True)
    doomed: dict[str, list[str]] = {}
    for i, (when, card, name) in enumerate(dated):
        if when != MINE and (i >= keep or now - when > max_age):
            doomed.setdefault(card, []).append(name)
    removed = 0
    for card, names in doomed.items():
        if parent is None:
            target = directory
        else:
            try:
                target = parent.sub(card)
            except OSError:
                continue
        assert target is not None
        try:
            for name in names:
                target.unlink(name)
                removed += 1
        finally:
            if parent is not None:
                target.close()
    return removed


def _prune_nested(
    directory: Dir,
    parts: tuple[str, ...],
    now: float,
    max_age: float,
    keep: int,
    spared: tuple[str, ...],
) -> int:
    """One directory per card: records counted over all cards, then empty cards removed."""
    dated: list[tuple[float, str, str]] = []
    touched: dict[str, float] = {}  # when each card's directory last changed, before we change it
    for card in directory.names():
        info = directory.lstat(card)
        if info is None or not is_dir(info.st_mode):
            continue
        try:
            card_dir = directory.sub(card)
        except OSError:
            continue  # a symlink, or gone
        try:
            touched[card] = info.st_mtime
            for when, name in _files(card_dir, now, (*parts, card), spared):
                dated.append((when, card, name))
        finally:
            card_dir.close()
    removed = _drop(None, directory, dated, now, max_age, keep)
    for card, when in touched.items():
        if now - min(when, now) <= EMPTY_CARD_SECONDS:
            continue
        try:
            card_dir = directory.sub(card)
        except OSError:
            continue
        try:
            if any(name not in spared for name in card_dir.names()):
                continue
            for name in spared:
                card_dir.unlink(name)
        finally:
            card_dir.close()
        directory.rmdir(card)
        removed += 1
    return removed
