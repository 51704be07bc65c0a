"""doctor's rows about lich itself: its variables, its listener and token, LICH_BIN."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Mapping

from lich_hooks import __version__
from lich_hooks.base.harnesses import REGISTRATIONS
from lich_hooks.base.lichenv import LichEnv, parse_port
from lich_hooks.base.runlog import RunLog
from lich_hooks.human.commands.doctor.check import FAIL, OK, SKIP, WARN, Check
from lich_hooks.human.standin import PROBE_HEADER

CONNECT_TIMEOUT = 1.0
VERSION_TIMEOUT = 5.0


def check_variables(environ: Mapping[str, str]) -> list[Check]:
    checks = []
    missing = [n for n in ("LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID") if not environ.get(n)]

    def said(*names: str) -> list[str]:
        return [f"{name}={environ[name]}" for name in names if name in environ]

    shown = said("LICH_PORT", "LICH_SESSION_ID", "LICH_BIN", "LICH_SUBAGENT_DEPTH")
    if environ.get("LICH_TOKEN"):
        shown.append(f"LICH_TOKEN=<redacted, {len(environ['LICH_TOKEN'])} characters>")
    shown += said("LICH_SUBAGENT_CARDS", "LICH_PROMPT_LANG")
    scrub = REGISTRATIONS["claude"].scrub_said(environ)
    if missing == ["LICH_TOKEN"]:  # a card (its port and id are here) whose token was stripped
        why = f"LICH_TOKEN is missing in this card, so nothing can be reported ({scrub[0]})"
        checks.append(Check("lich variables", FAIL, why, scrub[1], present=shown))
    elif missing:
        why = f"missing {', '.join(missing)}: this shell is not a lich card"
        fix = "run the harness (and this doctor) in a terminal lich opened; outside lich the "
        fix += "hooks do nothing on purpose"
        checks.append(Check("lich variables", FAIL, why, fix, present=shown))
    else:
        checks.append(Check("lich variables", OK, "; ".join(shown), present=shown))
    if not missing and environ.get(REGISTRATIONS["claude"].scrub or ""):
        why = f"a Claude Code started here removes LICH_TOKEN from its hooks ({scrub[0]}), so "
        why += "its sessions report nothing to lich"
        checks.append(Check("Claude Code credential scrub", WARN, why, scrub[1]))
    return checks


def check_listener(environ: Mapping[str, str]) -> list[Check]:
    raw = environ.get("LICH_PORT")
    if not raw:
        return [Check("lich listener", SKIP, "no LICH_PORT")]
    port = parse_port(raw)
    if port is None:
        shown = RunLog(environ).scrub(raw)  # before repr() escapes it
        why = f"LICH_PORT={shown!r} is not a port (a decimal 1-65535)"
        fix = "open a new lich terminal; something changed LICH_PORT in this one"
        return [Check("lich listener", FAIL, why, fix)]
    token = environ.get("LICH_TOKEN")
    try:
        if token:
            # One request both reaches the listener and tells whether it takes our token.
            status = _probe(port, token)
        else:
            with socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT):
                status = None
    except OSError as error:
        why = f"nothing answers on 127.0.0.1:{port} ({error.strerror or error})"
        fix = "is lich running? A terminal left over from a lich that quit keeps the old port: "
        return [Check("lich listener", FAIL, why, fix + "open a new card")]
    checks = [Check("lich listener", OK, f"127.0.0.1:{port} answers")]
    if status is not None:
        checks.append(_token_verdict(status))
    return checks


def _probe(port: int, token: str) -> int:
    """POST an empty body: lich answers 400 to a good token, 401 to a bad one, records nothing;
    through transport.post, the path reports take. An OSError never names the URL (the token)."""
    from lich_hooks.base import transport

    result = transport.post(
        LichEnv({"LICH_PORT": str(port), "LICH_TOKEN": token}),
        "session-start",
        {},
        {"User-Agent": f"lich-hooks/{__version__} doctor", PROBE_HEADER: "doctor"},
    )
    if result.status is None:
        raise OSError(_SEND_ERRORS.get(result.error or "", f"no HTTP answer ({result.error})"))
    return result.status


# transport.Result's error words, for a person.
_SEND_ERRORS = {
    "deadline": "timed out",
    "ConnectionRefusedError": "Connection refused",
    "ConnectionResetError": "Connection reset by peer",
    "BrokenPipeError": "Connection reset by peer",
    "closed-without-answer": "no HTTP answer (closed without one)",
    "bad-response": "no HTTP answer (not HTTP/1.x)",
}


def _token_verdict(status: int) -> Check:
    if status == 400:
        return Check("lich token", OK, "lich accepts LICH_TOKEN")
    if status == 401:
        fix = "this terminal belongs to an earlier lich run: open a new card"
        return Check("lich token", FAIL, "lich refuses LICH_TOKEN (401)", fix)
    return Check("lich token", WARN, f"unexpected answer {status} to a probe; is this lich?")


def check_bin(environ: Mapping[str, str]) -> Check:
    env = LichEnv(environ)
    if env.bin is None:
        status = WARN if env.can_report else SKIP
        fix = "update lich: it exports LICH_BIN into every card" if status == WARN else None
        why = "not set: agent cards stay native (reporting still works)"
        return Check("LICH_BIN", status, why, fix)
    if not env.bin_is_runnable():
        why = f"{env.bin} is not an absolute path to an executable file"
        fix = "open a new lich terminal; if it persists, reinstall lich"
        return Check("LICH_BIN", FAIL, why, fix)
    try:
        proc = subprocess.run(
            [env.bin, "version"],
            capture_output=True,
            timeout=VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        why = f"`{env.bin} version` did not answer within {VERSION_TIMEOUT:g} s"
        return Check("LICH_BIN", FAIL, why, "is lich hanging? restart it")
    except OSError as error:
        return Check("LICH_BIN", FAIL, f"cannot run {env.bin}: {error.strerror or error}")
    output = (proc.stdout or proc.stderr).decode("utf-8", "replace").strip().splitlines()
    first = output[0] if output else ""
    if proc.returncode != 0:
        why = f"`{env.bin} version` exited {proc.returncode}: {first or 'no output'}"
        return Check("LICH_BIN", FAIL, why, "reinstall lich, or open a new card")
    return Check("LICH_BIN", OK, f"{env.bin} runs: {first or '(no output)'}")
