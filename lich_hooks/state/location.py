"""Where per-user files live: the one rule for HOME, and the state directory's path.

HOME counts only as an absolute path, for the hooks and the human commands
alike: an unset or empty HOME falls back to the account's home in the
password database (as os.path.expanduser does), and a relative one is
invalid (as XDG says of its variables): the hooks then keep no state and
`install` refuses the user scope. Nothing is ever resolved against the
working directory, which for a hook is the user's project. `install` and
`doctor` find the harnesses' settings from the same home the hooks keep
their state under.

The platform directory is computed here rather than with platformdirs: the
Crush and Antigravity no-op paths read the state on every tool or model call,
and importing platformdirs costs more than those paths' whole budget.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

APP = "lich-hooks"


def absolute(value: str | None) -> str | None:
    """`value` when it is an absolute path (XDG: a relative one is invalid), else None."""
    return value if value and os.path.isabs(value) else None


def passwd_home() -> str | None:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return None


def home(environ: Mapping[str, str], account: Callable[[], str | None] = passwd_home) -> str | None:
    """The user's home: HOME if absolute; unset or empty, the account's (USERPROFILE
    first on Windows); None when HOME is relative or nothing absolute is found.
    """
    raw = environ.get("HOME")
    if raw:
        return absolute(raw)
    if sys.platform == "win32":
        found = absolute(environ.get("USERPROFILE"))
        if found is not None:
            return found
    return absolute(account())


def state_home(environ: Mapping[str, str], account: Callable[[], str | None]) -> str | None:
    """home(), except `/` (common in containers: "no home"), no place for per-user state.

    lich-hooks then keeps none unless XDG_STATE_HOME or LICH_HOOK_STATE_DIR names one.
    """
    found = home(environ, account)
    if found is None or os.path.normpath(found) in ("/", "//"):
        return None
    return found


def state_dir(
    environ: Mapping[str, str], account: Callable[[], str | None] = passwd_home
) -> str | None:
    """$LICH_HOOK_STATE_DIR, else the platform's per-user state directory; None: no usable one.

    Only absolute values count, so the result never depends on the working
    directory.
    """
    override = absolute(environ.get("LICH_HOOK_STATE_DIR"))
    if override:
        return override
    if sys.platform == "win32":
        base = absolute(environ.get("LOCALAPPDATA"))
        if base is None:
            found = state_home(environ, account)
            base = os.path.join(found, "AppData", "Local") if found else None
        return os.path.join(base, APP) if base else None
    xdg = absolute(environ.get("XDG_STATE_HOME")) if sys.platform != "darwin" else None
    if xdg:
        return os.path.join(xdg, APP)
    found = state_home(environ, account)
    if found is None:
        return None
    if sys.platform == "darwin":
        return os.path.join(found, "Library", "Application Support", APP)
    return os.path.join(found, ".local", "state", APP)


def file_key(text: str) -> str:
    """A file name for an arbitrary id (a lich card id) that cannot escape the directory."""
    safe = "".join(c if (c.isascii() and (c.isalnum() or c in "-_")) else "_" for c in text)
    if safe == text and 0 < len(text) <= 100:
        return text
    import hashlib

    return safe[:40] + "-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
