"""session-start's records (docs/session-start.md): the last id each card reported, and
the report in flight for it, and the Crush guard's marks. Among the state directory's records
rather than the jobs because Crush's attribution (hook/shared/crush/) reads them too."""

from __future__ import annotations

from lich_hooks.base.homes import CRUSH_MARKS, file_key, stamp
from lich_hooks.hook import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.hook.state import Where

REPORTED_LIMIT = 64 * 1024  # as large as a report's body: an id that fits must fit here too
# Their rows in state/prune.py's RULES.
REPORTED = ("reported",)
SENDING = ("sending",)
SERVED = ("served",)  # the card a conversation under one shared-process life went to
# The Crush guard's marks `<card>.<conversation>.<crush pid>`, each present only while the card's
# record holds that conversation, so a skip in the shell is one the record would make.
MARKS = (CRUSH_MARKS,)
CARD_LIMIT = 4096
# A refusal under the server is remembered, then judged again once this old: a refusal of the
# moment delays a report, never loses it.
REFUSED = b"\0refused "
REFUSAL_SECONDS = 30.0
# A sender sends only within SEND_SECONDS of its claim, so an older claim (its sender killed hard)
# is taken over without two reports in flight at once.
CLAIM_SECONDS = 10.0
SEND_SECONDS = 8.0


def last_reported(where: Where, card: str) -> str | None:
    data = state.read(where, REPORTED, file_key(card), REPORTED_LIMIT)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def remember_reported(environ: Mapping[str, str], card: str, value: str) -> None:
    state.write(environ, REPORTED, file_key(card), value.encode("utf-8", "surrogatepass"))


def forget_reported(where: Where, card: str) -> None:
    """Until lich answers 204 nobody knows which id it holds: a stale record would make a return
    to the old id look reported. The marks go after it (a mark made meanwhile re-reads it)."""
    state.remove(where, REPORTED, file_key(card))
    if file_key(card) != card:
        return  # no mark is made for a card id the shell would not spell as its file
    try:
        directory = state.open_dir(where, MARKS, create=False)
    except OSError:
        return
    try:
        for name in directory.names():
            if name.startswith(card + "."):
                directory.unlink(name)
    except OSError:
        pass
    finally:
        directory.close()


def mark(where: Where, card: str, value: str, name: str) -> None:
    """The guard's mark for `value`, removed again when the record no longer holds it."""
    try:
        directory = state.open_dir(where, MARKS, create=True)
    except OSError:
        return
    try:
        if directory.create(name, b"") and last_reported(where, card) != value:
            directory.unlink(name)
    except OSError:
        directory.unlink(name)
    finally:
        directory.close()


def _claim_name(card: str, value: str) -> str:
    return f"{file_key(card)}.{stamp(value)}"  # not hashlib: its import costs a report ~6 ms


def claim(where: Where, card: str, value: str, now: float) -> bool | None:
    """The one report in flight for this card and id: True, send (then `release`); False, another
    call's is in flight; None, no state: send anyway (never a lost report)."""
    from lich_hooks.base.safefile import is_regular

    try:
        directory = state.open_dir(where, SENDING, create=True)
    except OSError:
        return None
    name = _claim_name(card, value)
    try:
        for _ in range(2):
            if directory.create(name, repr(now).encode()):
                return True
            info = directory.lstat(name)
            if info is None:
                continue  # released just now: try again
            if is_regular(info.st_mode) and -1.0 < now - info.st_mtime < CLAIM_SECONDS:
                return False
            directory.unlink(name)  # stale (its sender was killed), or not a file
        return None
    except OSError:
        return None
    finally:
        directory.close()


def release(where: Where, card: str, value: str, now: float) -> None:
    """Only the claim made at `now`, not a later call's that took a stale one over."""
    name = _claim_name(card, value)
    if state.read(where, SENDING, name, 64) == repr(now).encode():
        state.remove(where, SENDING, name)


def served_name(server: int, started: int, value: str) -> str:
    return file_key(f"{server}-{started}\n{value}")


def served(where: Where, name: str, now: float) -> tuple[str | None, str | None]:
    """(the card, or the decision that refused it within REFUSAL_SECONDS), or (None, None)."""
    try:
        directory = state.open_dir(where, SERVED, create=False)
    except OSError:
        return None, None
    try:
        data = directory.read(name, CARD_LIMIT)
        if not data:
            return None, None
        if not data.startswith(REFUSED):
            return data.decode("utf-8"), None
        info = directory.lstat(name)
        word = data[len(REFUSED) :].decode("ascii")
        fresh = info is not None and -1.0 < now - info.st_mtime < REFUSAL_SECONDS
        return None, word if fresh and word.startswith("crush-server-") else None
    except UnicodeDecodeError:
        return None, None
    finally:
        directory.close()


def serve(environ: Mapping[str, str], name: str, card: str | None, refusal: str) -> None:
    data = card.encode("utf-8", "surrogatepass") if card else REFUSED + refusal.encode()
    state.write(environ, SERVED, name, data)
