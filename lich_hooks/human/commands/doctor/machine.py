"""doctor's rows about this machine: the state directory, interactive detection,
this installation, the debug log."""

from __future__ import annotations

import sys
from collections.abc import Mapping

from lich_hooks import __version__
from lich_hooks.base import homes as location
from lich_hooks.hook import interactive, state
from lich_hooks.human.commands.doctor.check import INFO, OK, WARN, Check, script_head

WITHOUT = "Crush and Antigravity then report on every call and TaskStop forgets workers"


def check_state_dir(environ: Mapping[str, str]) -> Check:
    directory = location.state_dir(environ)
    if directory is None:
        why = "no usable place: HOME is not an absolute path (or is /) and neither "
        why += "XDG_STATE_HOME nor LICH_HOOK_STATE_DIR names one"
        fix = f"{WITHOUT}: set LICH_HOOK_STATE_DIR to an absolute path"
        return Check("state directory", WARN, why, fix)
    try:
        state.probe(environ)
    except OSError as error:
        why = f"{directory} is not writable ({error.strerror or error})"
        fix = f"{WITHOUT}: fix its permissions or set LICH_HOOK_STATE_DIR"
        return Check("state directory", WARN, why, fix)
    return Check("state directory", OK, f"{directory} is writable")


def check_interactive(environ: Mapping[str, str]) -> Check:
    evidence = interactive.check(environ)
    verdict = "interactive" if evidence.interactive else "not interactive (like `claude -p`)"
    why = evidence.why
    if why.startswith("no evidence"):
        # the ladder's default: a session counts as interactive unless something says not
        why = "the default, as nothing here says otherwise" + why[len("no evidence") :]
    said = f"a Claude Code session started here would count as {verdict}: {why}"
    return Check("interactive detection", INFO, said)


def check_install(executable: str | None) -> Check:
    where = executable or "(console script not found)"
    summary = f"lich-hooks {__version__} at {where} (python {sys.executable})"
    if executable is not None and _wrapper_imports_re(executable):
        summary += "; its launcher imports `re`, which costs every hook run about 5 ms"
        fix = "reinstall with pip 25.2 or newer (`pip install -U pip`), pipx or uv: "
        return Check("this installation", WARN, summary, fix + "docs/performance.md")
    return Check("this installation", INFO, summary)


def _wrapper_imports_re(executable: str) -> bool:
    """pip before 25.2 writes a console-script launcher that imports `re` first."""
    head = script_head(executable, 4096)
    return head.startswith(b"#!") and b"\nimport re\n" in head


def check_debug(environ: Mapping[str, str]) -> Check:
    names = ("LICH_HOOK_DEBUG", "LICH_HOOK_LOG")
    parts = [f"{name}={environ[name]}" for name in names if environ.get(name)]
    off = "off (set LICH_HOOK_LOG=<file> in the harness's environment)"
    return Check("debug log", INFO, "; ".join(parts) or off)
