"""Branch names for isolated workers (docs/agent-cards.md): shaped like lich's own worktree
dialog's, with a suffix from the call's id so two calls never land on one existing branch."""

from __future__ import annotations

from lich_hooks.hook.jobs.agent_cards.eligibility import WORKER_BRANCH_PREFIX

MAX_CHARS = 40
MAX_WORDS = 5
MIN_WORDS = 2
MIN_CHARS = 10
SUFFIX_CHARS = 4
EMPTY = "agent"


def words(text: str) -> list[str]:
    """The runs of letters and digits (str.isalnum: any script) in `text`, lower-cased."""
    return "".join(char if char.isalnum() else " " for char in text.lower()).split()


def slug(description: str) -> str:
    """Never empty, at most 40 characters."""
    taken: list[str] = []
    length = 0  # of "-".join(taken)
    for word in words(description):
        if len(taken) >= MAX_WORDS:
            break
        grown = length + len(word) + (1 if taken else 0)
        if grown > MAX_CHARS and len(taken) >= MIN_WORDS and length >= MIN_CHARS:
            break
        taken.append(word)
        length = grown
    result = "-".join(taken)[:MAX_CHARS].rstrip("-")
    return result or EMPTY


def suffix(tool_use_id: str | None) -> str:
    """The id's last four letters or digits, lower-cased; none: four random hex digits."""
    chars = [c for c in (tool_use_id or "") if c.isalnum()]
    if not chars:
        import os

        return os.urandom(2).hex()
    return "".join(chars[-SUFFIX_CHARS:]).lower()


def branch(description: str, tool_use_id: str | None) -> str:
    return f"{WORKER_BRANCH_PREFIX}{slug(description)}-{suffix(tool_use_id)}"
