"""`lich-hook doctor [--json]`: what a user checks when "nothing reports" (docs/troubleshooting.md).

Each check gives a one-line verdict and, when it fails, what to do. The exit
code is 0 only when everything reporting needs is in place: the lich
variables, a listener that takes our token, and at least one harness
registration that the harness will really run (installed, enabled, trusted:
settings/discovery.py) and that runs an existing lich-hook. Warnings (a
duplicate registration, a state directory we cannot write) do not change it.
Each check is a function; `collect` lists them, so a new one is one more line.

Nothing here prints the token: it is shown as its length, and every check is
scrubbed of it (as runlog.py scrubs the log) before it is encoded, in case
`lich version` or a path echoes it: scrubbing the encoded text would miss a
token that JSON or repr() escapes.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys

from lich_hooks import __version__, interactive, state
from lich_hooks.commands import doctor_codex_daemon, doctor_crush_server, doctor_modules
from lich_hooks.commands.exit_codes import ExitCode
from lich_hooks.commands.style import paint
from lich_hooks.lichenv import LichEnv, parse_port
from lich_hooks.runlog import RunLog
from lich_hooks.settings import discovery, ours
from lich_hooks.settings.harnesses import HARNESSES
from lich_hooks.standin import PROBE_HEADER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from lich_hooks.commands.environment import Environment

OK, WARN, FAIL, INFO, SKIP = "ok", "warn", "fail", "info", "skip"
CONNECT_TIMEOUT = 1.0
VERSION_TIMEOUT = 5.0


class Check:
    def __init__(
        self, name: str, status: str, summary: str, fix: str | None = None, **details: object
    ) -> None:
        self.name = name
        self.status = status
        self.summary = summary
        self.fix = fix
        self.details = details

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
        }
        if self.fix:
            data["fix"] = self.fix
        if self.details:
            data["details"] = self.details
        return data


# --- lich's variables and listener ----------------------------------------------------


def check_variables(environ: Mapping[str, str]) -> list[Check]:
    checks = []
    missing = [
        name for name in ("LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID") if not environ.get(name)
    ]
    shown = []
    for name in ("LICH_PORT", "LICH_SESSION_ID", "LICH_BIN", "LICH_SUBAGENT_DEPTH"):
        if name in environ:
            shown.append(f"{name}={environ[name]}")
    if environ.get("LICH_TOKEN"):
        shown.append(f"LICH_TOKEN=<redacted, {len(environ['LICH_TOKEN'])} characters>")
    for name in ("LICH_SUBAGENT_CARDS", "LICH_PROMPT_LANG"):
        if name in environ:
            shown.append(f"{name}={environ[name]}")
    if missing:
        checks.append(
            Check(
                "lich variables",
                FAIL,
                f"missing {', '.join(missing)}: this shell is not a lich card",
                "run the harness (and this doctor) in a terminal lich opened; outside lich the "
                "hooks do nothing on purpose",
                present=shown,
            )
        )
    else:
        checks.append(Check("lich variables", OK, "; ".join(shown), present=shown))
    return checks


def check_listener(environ: Mapping[str, str]) -> list[Check]:
    raw = environ.get("LICH_PORT")
    if not raw:
        return [Check("lich listener", SKIP, "no LICH_PORT")]
    port = parse_port(raw)
    if port is None:
        shown = RunLog(environ).scrub(raw)  # before repr() escapes it
        return [
            Check(
                "lich listener",
                FAIL,
                f"LICH_PORT={shown!r} is not a port (a decimal 1-65535)",
                "open a new lich terminal; something changed LICH_PORT in this one",
            )
        ]
    token = environ.get("LICH_TOKEN")
    try:
        if token:
            # One request both reaches the listener and tells whether it takes our token.
            status = _probe(port, token)
        else:
            with socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT):
                status = None
    except OSError as error:
        return [
            Check(
                "lich listener",
                FAIL,
                f"nothing answers on 127.0.0.1:{port} ({error.strerror or error})",
                "is lich running? A terminal left over from a lich that quit keeps the old "
                "port: open a new card",
            )
        ]
    checks = [Check("lich listener", OK, f"127.0.0.1:{port} answers")]
    if status is not None:
        checks.append(_token_verdict(status))
    return checks


def _probe(port: int, token: str) -> int:
    """POST an empty body: lich answers 400 (bad body) to a good token, 401 to a bad one.

    The body is invalid on purpose, so lich records nothing. requests, as a
    human command can afford: with the environment's proxy settings off
    (`trust_env`) and no redirects, since the probe carries the token like a
    report does; the URL is the sender's own (transport.url), so any token a
    report can carry, a probe can too. A failure is raised as an OSError that
    names its cause and not the URL, which holds the token.
    """
    import requests

    from lich_hooks import transport

    try:
        with requests.Session() as session:
            session.trust_env = False
            response = session.post(
                transport.url(port, token, "session-start"),
                data=b"{}",
                headers={
                    **transport.headers(),
                    "User-Agent": f"lich-hooks/{__version__} doctor",
                    PROBE_HEADER: "doctor",  # `lich-hook listen` shows a probe, not a bad report
                },
                timeout=(CONNECT_TIMEOUT, 2.0),
                allow_redirects=False,
            )
            return response.status_code
    except requests.Timeout:
        raise OSError("timed out") from None
    except requests.ConnectionError as error:
        raise OSError(_root_cause(error)) from None
    except (requests.RequestException, UnicodeError) as error:
        raise OSError(f"not an HTTP answer ({type(error).__name__})") from None


def _root_cause(error: BaseException) -> str:
    """The socket error under requests' wrappers ("Connection refused"), without the URL."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            return str(seen.strerror)
        seen = seen.__cause__ or seen.__context__
    return f"no HTTP answer ({type(error).__name__})"


def _token_verdict(status: int) -> Check:
    if status == 400:
        return Check("lich token", OK, "lich accepts LICH_TOKEN")
    if status == 401:
        return Check(
            "lich token",
            FAIL,
            "lich refuses LICH_TOKEN (401)",
            "this terminal belongs to an earlier lich run: open a new card",
        )
    return Check("lich token", WARN, f"unexpected answer {status} to a probe; is this lich?")


def check_bin(environ: Mapping[str, str]) -> list[Check]:
    env = LichEnv(environ)
    if env.bin is None:
        status = WARN if env.can_report else SKIP
        return [
            Check(
                "LICH_BIN",
                status,
                "not set: agent cards stay native (reporting still works)",
                "update lich: it exports LICH_BIN into every card" if status == WARN else None,
            )
        ]
    if not env.bin_is_runnable():
        return [
            Check(
                "LICH_BIN",
                FAIL,
                f"{env.bin} is not an absolute path to an executable file",
                "open a new lich terminal; if it persists, reinstall lich",
            )
        ]
    try:
        proc = subprocess.run(
            [env.bin, "version"],
            capture_output=True,
            timeout=VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [
            Check(
                "LICH_BIN",
                FAIL,
                f"`{env.bin} version` did not answer within {VERSION_TIMEOUT:g} s",
                "is lich hanging? restart it",
            )
        ]
    except OSError as error:
        return [Check("LICH_BIN", FAIL, f"cannot run {env.bin}: {error.strerror or error}")]
    output = (proc.stdout or proc.stderr).decode("utf-8", "replace").strip().splitlines()
    first = output[0] if output else ""
    if proc.returncode != 0:
        return [
            Check(
                "LICH_BIN",
                FAIL,
                f"`{env.bin} version` exited {proc.returncode}: {first or 'no output'}",
                "reinstall lich, or open a new card",
            )
        ]
    return [Check("LICH_BIN", OK, f"{env.bin} runs: {first or '(no output)'}")]


# --- registrations --------------------------------------------------------------------


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def judge_command(command: str, executable: str | None, environ: Mapping[str, str]) -> Check:
    """Does this registered command run an existing lich-hook, and is it this one?"""
    argv = ours.split(command)
    program, what = argv[0], " ".join(argv[1:])
    if os.path.isabs(program):
        target: str | None = program
        how = program
    else:
        target = shutil.which(program, path=environ.get("PATH", os.defpath))
        how = f"{program} on PATH ({target or 'not found'})"
    if target is None or not os.path.isfile(target):
        return Check(
            what,
            FAIL,
            f"runs {how}, which does not exist",
            "register this installation by absolute path: lich-hook install <harness>",
        )
    if executable is not None and same_file(target, executable):
        return Check(what, OK, f"runs this installation ({how})")
    return Check(
        what,
        WARN,
        f"runs another installation: {how}",
        "lich-hook install <harness> switches it to this one",
    )


def _registration_check(
    found: discovery.Found, executable: str | None, environ: Mapping[str, str]
) -> Check:
    """One file's verdict: do its commands run an existing lich-hook, will the harness run them?"""
    harness = found.harness
    verdicts = [judge_command(command, executable, environ) for command in found.commands]
    statuses = [v.status for v in verdicts] + [FAIL for _ in found.blockers]
    lines = [f"{v.name}: {v.summary}" for v in verdicts]
    lines += list(found.notes) + [blocker.summary for blocker in found.blockers]
    fixes = [b.fix for b in found.blockers] + [v.fix for v in verdicts if v.fix]
    fix = fixes[0].replace("<harness>", harness.key) if fixes else None
    count = len(found.commands)
    owner = f" ({found.owner})" if found.owner else ""
    return Check(
        f"{harness.title} {found.label}",
        _worst(statuses),
        f"{found.path}{owner}: {count} lich-hook entr{'y' if count == 1 else 'ies'}",
        fix,
        commands=lines,
    )


def check_registrations(
    environ: Mapping[str, str], project: str, executable: str | None
) -> list[Check]:
    """A row per file that holds our entries; a failure unless some registration will run.

    A registration the harness will not run (a disabled plugin, an untrusted
    Codex hook) is a failure while its harness has no other working one, and
    a warning beside one that works.
    """
    checks: list[Check] = []
    rows: list[tuple[discovery.Found, Check]] = []
    for found in discovery.discover(environ, project):
        title, label, path = found.harness.title, found.label, found.path
        if found.error is not None:
            if not found.plugin:
                checks.append(
                    Check(
                        f"{title} {label}",
                        FAIL,
                        f"{path} does not parse: {found.error}",
                        f"{title} may ignore this whole file: fix it",
                    )
                )
            continue
        document = found.document
        if (
            found.harness.key == "claude"
            and isinstance(document, dict)
            and document.get("disableAllHooks")
        ):
            checks.append(
                Check(
                    f"{title} {label}",
                    FAIL,
                    f"{path} sets disableAllHooks: Claude Code runs no hook at all",
                    f'remove "disableAllHooks" from {path}',
                )
            )
        if found.commands:
            check = _registration_check(found, executable, environ)
            rows.append((found, check))
            checks.append(check)
    working = {found.harness.key for found, check in rows if check.status != FAIL}
    per_harness: dict[str, dict[str, str]] = {}  # harness -> source -> a path
    for found, check in rows:
        if found.blockers and found.harness.key in working:
            check.status = WARN  # another registration of this harness works
        if found.runs:
            # Copies of one plugin are one registration; the project may be the home.
            source = found.owner or os.path.realpath(found.path)
            per_harness.setdefault(found.harness.key, {}).setdefault(source, found.path)
    for key, sources in per_harness.items():
        paths = list(sources.values())
        if len(paths) > 1:
            checks.append(
                Check(
                    f"{HARNESSES[key].title} duplicates",
                    WARN,
                    f"registered in {len(paths)} places: each event runs lich-hook "
                    f"{len(paths)} times",
                    f"keep one: `lich-hook uninstall {key} --scope …` or remove the plugin",
                    files=paths,
                )
            )
    if not working:
        checks.append(
            Check(
                "registrations",
                FAIL,
                "no harness runs a working lich-hook",
                "run `lich-hook install claude` (or codex, crush, antigravity, opencode, omp): "
                "docs/install.md",
            )
        )
    return checks


# --- this machine ---------------------------------------------------------------------


def check_state_dir(environ: Mapping[str, str]) -> Check:
    directory = state.state_dir(environ)
    if directory is None:
        return Check(
            "state directory",
            WARN,
            "no usable place: HOME is not an absolute path (or is /) and neither "
            "XDG_STATE_HOME nor LICH_HOOK_STATE_DIR names one",
            "Crush and Antigravity then report on every call and TaskStop forgets workers: "
            "set LICH_HOOK_STATE_DIR to an absolute path",
        )
    try:
        state.probe(environ)
    except OSError as error:
        return Check(
            "state directory",
            WARN,
            f"{directory} is not writable ({error.strerror or error})",
            "Crush and Antigravity then report on every call and TaskStop forgets workers: "
            "fix its permissions or set LICH_HOOK_STATE_DIR",
        )
    return Check("state directory", OK, f"{directory} is writable")


def check_interactive(environ: Mapping[str, str]) -> Check:
    evidence = interactive.check(environ)
    verdict = "interactive" if evidence.interactive else "not interactive"
    return Check(
        "interactive detection",
        INFO,
        f"a Claude Code hook run from here would count as {verdict}: {evidence.why}",
    )


def check_install(executable: str | None) -> Check:
    where = executable or "(console script not found)"
    summary = f"lich-hooks {__version__} at {where} (python {sys.executable})"
    if executable is not None and _wrapper_imports_re(executable):
        return Check(
            "this installation",
            WARN,
            summary + "; its launcher imports `re`, which costs every hook run about 5 ms",
            fix="reinstall with pip 25.2 or newer (`pip install -U pip`), pipx or uv: "
            "docs/performance.md",
        )
    return Check("this installation", INFO, summary)


def _wrapper_imports_re(executable: str) -> bool:
    """pip before 25.2 writes a console-script launcher that imports `re` first."""
    try:
        with open(executable, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and b"\nimport re\n" in head


def check_debug(environ: Mapping[str, str]) -> Check:
    parts = []
    for name in ("LICH_HOOK_DEBUG", "LICH_HOOK_LOG"):
        if environ.get(name):
            parts.append(f"{name}={environ[name]}")
    return Check(
        "debug log",
        INFO,
        "; ".join(parts)
        if parts
        else "off (set LICH_HOOK_LOG=<file> in the harness's environment)",
    )


_RANK = {INFO: 0, SKIP: 0, OK: 1, WARN: 2, FAIL: 3}


def _worst(statuses: list[str]) -> str:
    return max(statuses, key=lambda s: _RANK[s]) if statuses else OK


def collect(environ: Mapping[str, str], project: str) -> list[Check]:
    """Every check, in the order shown. A new check is one function and one line here."""
    try:
        executable: str | None = ours.this_executable()
    except ours.Refused:
        executable = None
    registrations = check_registrations(environ, project, executable)
    module_checks = doctor_modules.doctor_checks(environ, project, executable)
    if any(c.status in (OK, WARN) and "module" in c.details for c in module_checks):
        # an opencode or omp module runs an existing lich-hook: that is a working registration
        registrations = [c for c in registrations if c.name != "registrations"]
    return [
        check_install(executable),
        *check_variables(environ),
        *check_listener(environ),
        *check_bin(environ),
        *registrations,
        *module_checks,
        *doctor_codex_daemon.check(environ),
        *doctor_crush_server.check(environ),
        check_state_dir(environ),
        check_interactive(environ),
        check_debug(environ),
    ]


_MARKS = {
    OK: ("ok", "green"),
    WARN: ("warn", "yellow"),
    FAIL: ("FAIL", "red"),
    INFO: ("info", "dim"),
    SKIP: ("skip", "dim"),
}


def run(environment: Environment, as_json: bool = False) -> ExitCode:
    """OK when everything reporting needs is in place, else PROBLEM_FOUND."""
    out, env, color = environment.out, environment.environ, environment.colour
    checks = collect(env, environment.cwd)
    ok = all(check.status != FAIL for check in checks)
    rows = RunLog(env).scrub([c.as_dict() for c in checks])
    assert isinstance(rows, list)
    if as_json:
        import json

        report = {"ok": ok, "version": __version__, "checks": rows}
        out(json.dumps(report, indent=2, ensure_ascii=False))
        return ExitCode.OK if ok else ExitCode.PROBLEM_FOUND
    for row in rows:
        mark, colour = _MARKS[row["status"]]
        out(f"{paint(f'[{mark:>4}]', colour, color)} {row['name']}: {row['summary']}")
        commands = row.get("details", {}).get("commands")
        for line in commands if isinstance(commands, list) else []:
            out(f"         {line}")
        if row.get("fix") and row["status"] in (FAIL, WARN):
            out(f"         -> {row['fix']}")
    failed = sum(1 for c in checks if c.status == FAIL)
    if ok:
        out(paint("Everything reporting needs is in place.", "green", color))
    else:
        out(paint(f"{failed} problem(s): see the -> lines above.", "red", color))
    return ExitCode.OK if ok else ExitCode.PROBLEM_FOUND
