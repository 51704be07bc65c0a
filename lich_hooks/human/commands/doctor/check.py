"""doctor's vocabulary: a check's verdict and how verdicts combine (checks import only this)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

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


def carries(carried: Mapping[str, str] | None, mine: str | None) -> tuple[str | None, str]:
    """The card a shared process carries, and that said for a person (another card's, if so)."""
    whose = f"carries {describe(carried)}"
    card = (carried or {}).get("LICH_SESSION_ID")
    if card and mine and card != mine:
        whose += f" (another card's: this terminal is {mine})"
    return card, whose


def shared_process(
    name: str,
    summary: str,
    *,
    shared: str | None,
    carried: tuple[str | None, str],
    here: str | None,
    fixes: tuple[str, str],
    mine: str,
    rows: list[str],
    **ids: object,
) -> Check:
    """A shared process's row (Codex's daemon, Crush's server): a warning only where reports
    are lost (`shared`) or this card (`here`) sees another's variables (`carried`: carries())."""
    status: Status = OK
    fix = None
    card, whose = carried
    if shared:
        status, fix, summary = WARN, fixes[0], summary + shared
    elif card and here and card != here:
        status, fix = WARN, fixes[1]
        summary += f"; it {whose}: commands the agent runs here see that card's variables"
    else:
        summary += mine
    check = Check(name, status, summary, fix)
    check.details = {**ids, "commands": rows if status != OK else [], "clients": rows}
    return check
