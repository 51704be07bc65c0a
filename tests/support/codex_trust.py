"""Codex's hook trust hash, written out once for the tests from what Codex was measured to store.

Independent of lich_hooks/human/settings/codex_state.py on purpose: the tests that
seed trust records (the operator tests' fake homes, the real clients' CODEX_HOME)
hold doctor's formula to this one, and the real Codex holds this one to itself.
"""

from __future__ import annotations

import hashlib
import json


def trusted_hash(event_snake: str, group: dict[str, object], handler: dict[str, object]) -> str:
    """Codex 0.171.0's trust hash of one hook handler (matched what its TUI wrote, byte for byte).

    sha256 over the canonical JSON (sorted keys, no spaces) of the handler's
    identity: the event, the group's matcher when it has one, and the handler
    with its defaults filled in.
    """
    identity: dict[str, object] = {
        "event_name": event_snake,
        "hooks": [
            {
                "type": handler.get("type", "command"),
                "command": handler["command"],
                "timeout": handler.get("timeout", 600),
                "async": handler.get("async", False),
                **(
                    {"statusMessage": handler["statusMessage"]}
                    if "statusMessage" in handler
                    else {}
                ),
            }
        ],
    }
    if "matcher" in group:
        identity["matcher"] = group["matcher"]
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


# What Codex 0.171.0's TUI wrote on "t" (trust) in /hooks for a SessionStart handler with a
# statusMessage (docs/harnesses.md, Codex): the statusMessage is part of the identity.
MEASURED_WITH_STATUS_MESSAGE = (
    {
        "type": "command",
        "command": "true second",
        "timeout": 5,
        "statusMessage": "lich: report this session",
    },
    "sha256:59fa21289d7d98029fccfe18463e3bcdc9d9caece928243443766ac8701be1e9",
)
