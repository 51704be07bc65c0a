"""Where per-user files live, from one environ (docs/troubleshooting.md, "What lich-hook writes");
by hand, as importing platformdirs costs more than a no-op hook's budget."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

APP = "lich-hooks"


def absolute(value: str | None) -> str | None:
    return value if value and os.path.isabs(value) else None


def passwd_home() -> str | None:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return None


def home(environ: Mapping[str, str], account: Callable[[], str | None] = passwd_home) -> str | None:
    """HOME if absolute; unset or empty, the account's (USERPROFILE first on Windows)."""
    raw = environ.get("HOME")
    if raw:
        return absolute(raw)
    if sys.platform == "win32":
        found = absolute(environ.get("USERPROFILE"))
        if found is not None:
            return found
    return absolute(account())


def codex_home(environ: Mapping[str, str]) -> str | None:
    if environ.get("CODEX_HOME"):
        return environ["CODEX_HOME"]
    found = home(environ)
    return None if found is None else os.path.join(found, ".codex")


def state_home(environ: Mapping[str, str], account: Callable[[], str | None]) -> str | None:
    """home(), except `/` (a container's "no home"): then no state unless a variable names one."""
    found = home(environ, account)
    if found is None or os.path.normpath(found) in ("/", "//"):
        return None
    return found


def state_dir(
    environ: Mapping[str, str], account: Callable[[], str | None] = passwd_home
) -> str | None:
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


# The Crush guard's marks (settings/commandline.py MARK): a directory of the state directory.
CRUSH_MARKS = "crush-reported"


def marked_state_dir(environ: Mapping[str, str]) -> str:
    """What the Crush guard's shell expansion of the state directory gives (sh's `:-`)."""
    state = environ.get("XDG_STATE_HOME") or f"{environ.get('HOME', '')}/.local/state"
    return environ.get("LICH_HOOK_STATE_DIR") or f"{state}/{APP}"


def stamp(value: object) -> str:
    """Two CRCs (hashlib's OpenSSL import costs several ms): enough to tell apart the identities a
    state directory holds within the prune's hour; an adversary could only silence one of our own
    reports."""
    import zlib

    text = value if isinstance(value, str) else repr(value)
    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.crc32(data[::-1], 0x5BD1E995):08x}"


def file_key(text: str) -> str:
    """A file name for an arbitrary id that cannot escape the directory."""
    safe = "".join(c if (c.isascii() and (c.isalnum() or c in "-_")) else "_" for c in text)
    if safe == text and 0 < len(text) <= 100:
        return text
    import hashlib

    return safe[:40] + "-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
