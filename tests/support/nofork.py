"""Run the real console script as it runs where `os.fork` does not exist (Windows).

A `sitecustomize` module on PYTHONPATH deletes `os.fork` at interpreter start,
before the console script imports anything of ours, so the hook takes the
inline path: the send runs in the hook process, bounded by the same deadline.
"""

from __future__ import annotations

from pathlib import Path

SITECUSTOMIZE = "import os\n\ndel os.fork\n"


def no_fork_env(tmp: Path, env: dict[str, str]) -> dict[str, str]:
    """`env` for a process in which `os.fork` is missing."""
    site = tmp / "nofork-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return {**env, "PYTHONPATH": str(site)}
