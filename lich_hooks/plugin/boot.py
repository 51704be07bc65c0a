"""The plugin route's entry point, `python -E -s -S boot.py <event> <provider>`, readable by any
Python: one older than 3.10 exits 86 before it touches anything, so the launcher tries the next
with stdin unread. The hook itself is lich_hooks_boot.py beside it, a module Python compiles once:
this script, compiled on every run, stays a few lines (docs/performance.md)."""

import sys

if sys.version_info < (3, 10):  # noqa: UP036 - read by any Python
    sys.exit(86)

import os

here = os.path.dirname(os.path.abspath(__file__))
if sys.path[:1] != [here]:  # `-I` (tests) leaves the script's folder out
    sys.path.insert(0, here)
import lich_hooks_boot  # type: ignore[import-not-found]  # noqa: E402,F401 - runs the hook
