"""A stand-in `lich` executable for LICH_BIN: records every call, answers like lich.

The hook calls `$LICH_BIN open … --json`, `close`, `control`, `sessions --json`
as argv lists. The script appends one JSON line per call (argv, cwd, the LICH_
variables it saw) and prints the scripted answer for that subcommand, read
from a JSON file the test can rewrite between turns.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

SCRIPT = """#!{python}
import json, os, sys
here = {folder!r}
args = sys.argv[1:]
with open(os.path.join(here, "calls.jsonl"), "a") as log:
    log.write(json.dumps({{"argv": args, "cwd": os.getcwd(),
        "env": {{k: v for k, v in os.environ.items() if k.startswith("LICH_")}}}}) + "\\n")
with open(os.path.join(here, "answers.json")) as f:
    answers = json.load(f)
command = args[0] if args else ""
prompt = args[args.index("--prompt") + 1] if "--prompt" in args[:-1] else None
answer = answers.get(command + ":" + str(prompt)) or answers.get(command)
answer = answer or {{"stdout": "", "exit": 0}}
sys.stdout.write(answer.get("stdout", ""))
sys.stderr.write(answer.get("stderr", ""))
sys.exit(answer.get("exit", 0))
"""


def open_answer(
    status: str = "pending",
    label: str = "Find the flaky test",
    name: str = "find-the-flaky-test",
    answer: str | None = None,
) -> dict[str, Any]:
    """What `lich open --json` prints: the session plus its delivery (docs/agent-cards.md)."""
    return {
        "id": "lich-session-42",
        "label": label,
        "name": name,
        "path": "/tmp/lich-worker-checkout",
        "kind": "claude",
        "delivery": {
            "ticket": "ticket-1",
            "target": "lich-session-42",
            "status": status,
            "answer": answer,
        },
    }


class FakeLich:
    """`FakeLich(folder)`: `.path` is LICH_BIN; `.calls()` what the hook asked of it."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = folder / "lich"
        self.path.write_text(SCRIPT.format(python=sys.executable, folder=str(folder)))
        self.path.chmod(0o755)
        self.answers(open=open_answer())

    def answers(
        self, opens: dict[str, dict[str, Any]] | None = None, **by_command: dict[str, Any]
    ) -> None:
        """Set what each subcommand answers; `open=` takes lich's JSON object, and `opens`
        maps a prompt to the object `open --prompt <prompt>` answers instead."""
        table: dict[str, dict[str, Any]] = {
            "version": {"stdout": "lich 0.0.0-standin\n"},
            "sessions": {"stdout": "[]\n"},
            "close": {"stdout": ""},
            "control": {"stdout": "", "exit": 2},
        }
        for command, value in by_command.items():
            if command == "open":
                table["open"] = {"stdout": json.dumps(value) + "\n"}
            else:
                table[command] = value
        for prompt, value in (opens or {}).items():
            table[f"open:{prompt}"] = {"stdout": json.dumps(value) + "\n"}
        (self.folder / "answers.json").write_text(json.dumps(table))

    def calls(self) -> list[dict[str, Any]]:
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

    def wait_for(self, command: str, timeout: float = 30.0) -> dict[str, Any]:
        """The first call of `command` (`open`, `close`, …), waiting up to `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            found = [c for c in self.calls() if c["argv"][:1] == [command]]
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"lich {command} was never called; calls: {self.calls()}")
            time.sleep(0.05)
