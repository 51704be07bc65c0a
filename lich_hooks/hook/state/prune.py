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

# Every record directory (each writer names its own here, so this floor imports none above it;
# tests/state holds each to a row): entries older than the age go, and all but the newest `keep`;
# a nested directory holds one directory per card, removed once only its spared names are left.
# A record gone costs a report again or one attribution more, never a wrong card.
WORKERS_AGE = 14 * DAY  # pruned even if still running, so the status line does not read it

RULES: tuple[Rule, ...] = (
    ("reported", 30 * DAY, 200, False, ()),  # hook/state/session_record.py
    ("sending", 60.0, 200, False, ()),  # the same: left only by a sender killed hard
    ("crush-reported", 30 * DAY, 200, False, ()),  # the same: the Crush guard's marks
    ("served", 30 * DAY, 200, False, ()),  # the same: a crush conversation's card
    ("workers", WORKERS_AGE, 200, True, (".checked",)),  # agent_cards/record.py
    ("installed", 365 * DAY, 200, False, ()),  # human/settings/install_record.py
    ("codex-daemon", 0.0, 0, False, ()),  # written by older releases: emptied whatever its age
    # hook/shared/codex/refused.py: told on the next hook, listed by doctor, useless once the
    # daemon is gone; one gone is a refusal nobody is told of
    ("codex-refused", 7 * DAY, 200, False, ()),
    # hook/shared/codex/nudge.py: a sender's open request; one outlives its sender only when the
    # sender was killed hard, and then names a process that is gone (so it excuses nothing)
    ("codex-nudges", 600.0, 200, False, ()),
    # hook/shared/codex/__init__.py (ties): rewritten at each hook while its TUI lives; one gone
    # leaves that TUI's next conversation to the log, which may no longer show its window
    ("codex-ties", 30 * DAY, 200, False, ()),
    ("claims", 3600.0, 2000, False, ()),  # hook/claim.py: a tool call's silences a late run
    # hook/state/stops.py: a worker session's last Stop. One gone leaves that session's next
    # transcript read only the file's own proof (docs/worker-answer.md)
    ("stops", 30 * DAY, 2000, False, ()),
)


def after_run(
    environ: Mapping[str, str], now: float, inline: bool = False, wanted: bool = False
) -> None:
    """Prune, detached unless `inline`, if this run wrote a record (or a reader found more than it
    reads: `wanted`) and the last prune is PRUNE_EVERY old. Best-effort: errors are swallowed."""
    try:
        if not (state.WRITTEN or wanted) or not due(environ, now):
            return
        if inline:
            _prune_and_log(environ, now)
            return
        from lich_hooks.hook import detach

        if detach.fork() == 0:
            try:
                _prune_and_log(environ, now)
            finally:
                os._exit(0)
    except Exception:  # noqa: S110 - best-effort state, never the turn
        pass


def _prune_and_log(environ: Mapping[str, str], now: float) -> None:
    import time

    from lich_hooks.base.runlog import RunLog

    started = time.monotonic()
    removed = maybe_prune(environ, now)
    if removed:
        log = RunLog(environ, started)
        log.set(event="prune", decision="pruned", removed=removed, prune_ms=log.elapsed_ms())
        log.write()


def due(environ: Mapping[str, str], now: float) -> bool:
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


def prune(root: Dir, now: float) -> int:
    """How many entries went; a killed writer's temporary files go with the other old entries."""
    removed = 0
    for name, max_age, keep, nested, spared in RULES:
        try:
            directory = root.sub(name)
        except OSError:
            continue
        try:
            if nested:
                removed += _prune_nested(directory, (name,), now, max_age, keep, spared)
            else:
                dated = [(when, "", entry) for when, entry in _files(directory, now, (name,), ())]
                for entry in _doomed(dated, now, max_age, keep).get("", []):
                    directory.unlink(entry)
                    removed += 1
        finally:
            directory.close()
    return removed


def _files(
    directory: Dir, now: float, parts: tuple[str, ...], spared: tuple[str, ...]
) -> list[tuple[float, str]]:
    """(when, name) of every non-directory; future mtimes count as now, this run's own as MINE."""
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


def _doomed(
    dated: list[tuple[float, str, str]], now: float, max_age: float, keep: int
) -> dict[str, list[str]]:
    """card -> names of the (when, card, name) entries older than `max_age` and all but the
    newest `keep`."""
    dated.sort(key=lambda item: item[0], reverse=True)
    doomed: dict[str, list[str]] = {}
    for i, (when, card, name) in enumerate(dated):
        if when != MINE and (i >= keep or now - when > max_age):
            doomed.setdefault(card, []).append(name)
    return doomed


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
    removed = 0
    for card, names in _doomed(dated, now, max_age, keep).items():
        try:  # each card's directory opened only while its entries are removed
            card_dir = directory.sub(card)
        except OSError:
            continue
        try:
            for name in names:
                card_dir.unlink(name)
                removed += 1
        finally:
            card_dir.close()
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
