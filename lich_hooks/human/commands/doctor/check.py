"""doctor's vocabulary: a check's verdict and how verdicts combine (checks import only this)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from lich_hooks.base.safefile import open_regular, read_upto
from lich_hooks.hook.shared.proc import lich_environ

Status = Literal["ok", "warn", "fail", "info", "skip"]

OK: Status = "ok"
WARN: Status = "warn"
FAIL: Status = "fail"
INFO: Status = "info"
SKIP: Status = "skip"

# How bad a status is; the worst of a row's parts is the row's.
RANK: dict[Status, int] = {INFO: 0, SKIP: 0, OK: 1, WARN: 2, FAIL: 3}


class Check:
    """One row: name, status, summary, the fix; the verdict needs one `counts_as_registration`."""

    def __init__(
        self,
        name: str,
        status: Status,
        summary: str,
        fix: str | None = None,
        *,
        counts_as_registration: bool = False,
        **details: object,
    ) -> None:
        self.name = name
        self.status = status
        self.summary = summary
        self.fix = fix
        self.counts_as_registration = counts_as_registration
        self.details = details

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = dict(name=self.name, status=self.status, summary=self.summary)
        if self.fix:
            data["fix"] = self.fix
        if self.details:
            data["details"] = self.details
        return data


def worst(statuses: list[Status]) -> Status:
    return max(statuses, key=lambda s: RANK[s]) if statuses else OK


def script_head(path: str, size: int) -> bytes:
    """A script's first bytes, through symlinks as exec goes; b"" when it is no readable regular
    file (a FIFO never blocks doctor). Only the head: a longer script is still judged."""
    try:
        fd, _ = open_regular(path, follow=True)
    except (OSError, ValueError):
        return b""
    try:
        return read_upto(fd, size)
    except OSError:
        return b""
    finally:
        os.close(fd)


def describe(lich: Mapping[str, str] | None) -> str:
    """A card's variables for a person: the token as its length only."""
    if lich is None:
        return "environment unreadable"
    if not lich:
        return "no lich card (started outside lich)"
    parts = [f"{key}={lich[key]}" for key in ("LICH_SESSION_ID", "LICH_PORT") if key in lich]
    if lich.get("LICH_TOKEN"):
        parts.append(f"LICH_TOKEN=<redacted, {len(lich['LICH_TOKEN'])} characters>")
    return ", ".join(parts)


def shared_process(
    name: str,
    summary: str,
    environ: Mapping[str, str],
    lost: str | None,
    fixes: tuple[str, str],
    fine: str,
    rows: list[str],
    role: str,
    pid: int,
) -> Check:
    """A shared process's row (Codex's daemon, Crush's server: `role`, the key its pid has in the
    details): a warning only where reports are `lost` or this card sees another's variables
    (those the process carries)."""
    carried, mine = lich_environ(pid), environ.get("LICH_SESSION_ID")
    whose = f"carries {describe(carried)}"
    card = (carried or {}).get("LICH_SESSION_ID")
    another = bool(card and mine and card != mine)
    if another:
        whose += f" (another card's: this terminal is {mine})"
    status: Status = OK
    fix = None
    if lost:
        status, fix, summary = WARN, fixes[0], f"{summary}; {lost} (it {whose})"
    elif another:
        status, fix = WARN, fixes[1]
        summary += f"; it {whose}: commands the agent runs here see that card's variables"
    else:
        summary += fine
    check = Check(name, status, summary, fix)
    shown = rows if status != OK else []  # a row's reasons: shown only when something is wrong
    check.details = {role: pid, "carries": card, "commands": shown, "clients": rows}
    return check
