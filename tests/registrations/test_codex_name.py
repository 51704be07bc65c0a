"""Codex lists our hook by name: its statusMessage (Codex 0.171.0's /hooks showed a handler
without one as "Unnamed hook", and one with it by that text), which its trust hash covers."""

from __future__ import annotations

import json
from pathlib import Path

from lich_hooks.human.settings import registrations
from lich_hooks.human.settings.codex_state import trust_hash
from tests.support.codex_trust import MEASURED_WITH_STATUS_MESSAGE, trusted_hash

ROOT = Path(__file__).resolve().parents[2]


def test_every_codex_handler_we_ship_is_named() -> None:
    for relative in ("codex-hooks.json", "lich_hooks/plugin/codex-hooks.json"):
        hooks = json.loads((ROOT / relative).read_text())["hooks"]
        handlers = [h for groups in hooks.values() for g in groups for h in g["hooks"]]
        assert handlers and all(
            h["statusMessage"] == registrations.CODEX_STATUS_MESSAGE for h in handlers
        ), relative


def test_the_trust_hash_covers_the_name_as_codex_measured() -> None:
    handler, measured = MEASURED_WITH_STATUS_MESSAGE
    assert trust_hash("SessionStart", None, handler) == measured
    assert trusted_hash("session_start", {}, dict(handler)) == measured
    unnamed = {k: v for k, v in handler.items() if k != "statusMessage"}
    assert trust_hash("SessionStart", None, unnamed) != measured
