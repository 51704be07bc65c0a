"""`lich-hook doctor [--json]`: what a user checks when "nothing reports" (SPEC §8).

Each check gives a one-line verdict and, when it fails, what to do. The exit
code is 0 only when everything reporting needs is in place: the lich
variables, a listener that takes our token, and at least one harness
registration that runs an existing lich-hook. Warnings (a duplicate
registration, a state directory we cannot write) do not change it.

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

from lich_hooks import PLUGIN_RELEASE, __version__, interactive, settings_files, state
from lich_hooks.commands import jsontext
from lich_hooks.commands.style import paint
from lich_hooks.lichenv import LichEnv, parse_port
from lich_hooks.runlog import RunLog

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

OK, WARN, FAIL, INFO, SKIP = "ok", "warn", "fail", "info", "skip"
CONNECT_TIMEOUT = 1.0
VERSION_TIMEOUT = 5.0
PLUGIN_SCAN_DEPTH = 7
PLUGIN_FILE_NAMES = ("hooks.json", "codex-hooks.json", "crush-hooks.json")


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

    The body is invalid on purpose, so lich records nothing.
    """
    import http.client
    from urllib.parse import quote

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2.0)
    try:
        connection.request(
            "POST",
            f"/session-start?token={quote(token, safe='', errors='surrogateescape')}",
            body=b"{}",
            headers={
                "Content-Type": "application/json",
                "X-Lich-Plugin": PLUGIN_RELEASE,
                "User-Agent": f"lich-hooks/{__version__} doctor",
            },
        )
        return connection.getresponse().status
    except http.client.HTTPException as error:
        raise OSError(f"not an HTTP answer ({type(error).__name__})") from None
    finally:
        connection.close()


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


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def judge_command(command: str, executable: str | None, environ: Mapping[str, str]) -> Check:
    """Does this registered command run an existing lich-hook, and is it this one?"""
    argv = settings_files.split(command)
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
    if executable is not None and _same_file(target, executable):
        return Check(what, OK, f"runs this installation ({how})")
    return Check(
        what,
        WARN,
        f"runs another installation: {how}",
        "lich-hook install <harness> switches it to this one",
    )


def _settings_locations(environ: Mapping[str, str], project: str) -> list[tuple[str, str, str]]:
    """(harness, label, path) for every settings file a harness reads hooks from."""
    found = []
    for key, harness in settings_files.HARNESSES.items():
        for scope in settings_files.SCOPES:
            found.append((key, f"{scope} settings", harness.path(scope, environ, project)))
        if key == "claude":
            local = os.path.join(project, ".claude", "settings.local.json")
            found.append((key, "project local settings", local))
        if key == "crush":  # Crush loads both; install edits only the first that exists
            for name in (".crush.json", "crush.json"):
                found.append((key, "project settings", os.path.join(project, name)))
    return found


def _plugin_roots(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    home = settings_files.home(environ)
    claude = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    codex = environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    return [
        ("claude", os.path.join(claude, "plugins")),
        ("codex", os.path.join(codex, "plugins")),
        ("antigravity", os.path.join(home, ".gemini", "antigravity-cli", "plugins")),
    ]


def _plugin_files(root: str) -> list[str]:
    found = []
    base_depth = root.rstrip(os.sep).count(os.sep)
    for directory, subdirs, files in os.walk(root):
        if directory.count(os.sep) - base_depth >= PLUGIN_SCAN_DEPTH:
            subdirs[:] = []
        subdirs[:] = [d for d in subdirs if d not in (".git", "node_modules")]
        for name in files:
            if name in PLUGIN_FILE_NAMES:
                found.append(os.path.join(directory, name))
    return sorted(found)


def _read_document(path: str, jsonc: bool) -> object:
    """A JSON(C) file's value; a JsonTextError saying why it could not be read."""
    from lich_hooks.commands import settings_io

    try:
        # The limit install uses: a file install wrote, doctor can read.
        data = settings_io.read_bytes(path) or b""
        parsed = jsontext.parse(data.decode("utf-8"), jsonc=jsonc)
    except (settings_files.Refused, UnicodeDecodeError) as error:
        raise jsontext.JsonTextError(str(error)) from None
    return parsed.root.value if parsed.root else None


def _ours(document: object, harness_key: str, plugin: bool) -> list[str]:
    """Our commands in one of this harness's settings or plugin files.

    A plugin folder is a clone of this repository, holding every harness's
    registration file: only the commands for this harness's provider in it are
    this harness's registration.
    """
    found = settings_files.our_commands(document)
    if not plugin:
        return found
    return [command for command in found if settings_files.provider(command) == harness_key]


def registered_in(
    harness_key: str, environ: Mapping[str, str], project: str, jsonc_plugins: bool = True
) -> list[str]:
    """Every settings or plugin file of this harness that runs one of our commands."""
    harness = settings_files.HARNESSES[harness_key]
    places = [
        (path, False)
        for key, _, path in _settings_locations(environ, project)
        if key == harness_key
    ]
    for key, root in _plugin_roots(environ):
        if key == harness_key and os.path.isdir(root):
            places.extend((path, True) for path in _plugin_files(root))
    found: list[str] = []
    seen: set[str] = set()
    for place, plugin in places:
        path = os.path.realpath(place)
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        try:
            document = _read_document(path, jsonc=harness.jsonc or jsonc_plugins)
        except jsontext.JsonTextError:
            continue
        if _ours(document, harness_key, plugin):
            found.append(path)
    return found


def check_registrations(environ: Mapping[str, str], project: str) -> list[Check]:
    try:
        executable: str | None = settings_files.this_executable()
    except settings_files.Refused:
        executable = None
    checks: list[Check] = []
    per_harness: dict[str, dict[str, str]] = {}  # title -> source -> a path
    keys: dict[str, str] = {}
    working = 0
    places: list[tuple[str, str, str]] = list(_settings_locations(environ, project))
    for key, root in _plugin_roots(environ):
        if os.path.isdir(root):
            places.extend((key, "plugin", path) for path in _plugin_files(root))
    seen: set[str] = set()
    for key, label, path in places:
        real = os.path.realpath(path)
        if real in seen or not os.path.isfile(path):
            continue  # the project may be the home: one file, counted once
        seen.add(real)
        harness = settings_files.HARNESSES[key]
        title = harness.title
        try:
            document = _read_document(path, jsonc=harness.jsonc or label == "plugin")
        except jsontext.JsonTextError as error:
            if label != "plugin":
                checks.append(
                    Check(
                        f"{title} {label}",
                        FAIL,
                        f"{path} does not parse: {error}",
                        f"{title} may ignore this whole file: fix it",
                    )
                )
            continue
        if key == "claude" and isinstance(document, dict) and document.get("disableAllHooks"):
            checks.append(
                Check(
                    f"{title} {label}",
                    FAIL,
                    f"{path} sets disableAllHooks: Claude Code runs no hook at all",
                    f'remove "disableAllHooks" from {path}',
                )
            )
        found = _ours(document, key, label == "plugin")
        if not found:
            continue
        # Copies of one plugin (marketplace clone, cache) are one registration.
        source = "plugin" if label == "plugin" else real
        per_harness.setdefault(title, {}).setdefault(source, path)
        keys[title] = key
        verdicts = [judge_command(command, executable, environ) for command in found]
        worst = _worst([v.status for v in verdicts])
        if worst != FAIL:
            working += 1
        lines = [f"{v.name}: {v.summary}" for v in verdicts]
        fix = next((v.fix for v in verdicts if v.fix), None)
        if fix:
            fix = fix.replace("<harness>", key)
        checks.append(
            Check(
                f"{title} {label}",
                worst,
                f"{path}: {len(found)} lich-hook entr{'y' if len(found) == 1 else 'ies'}",
                fix,
                commands=lines,
            )
        )
    for title, sources in per_harness.items():
        paths = list(sources.values())
        if len(paths) > 1:
            checks.append(
                Check(
                    f"{title} duplicates",
                    WARN,
                    f"registered in {len(paths)} places: each event runs lich-hook "
                    f"{len(paths)} times",
                    f"keep one: `lich-hook uninstall {keys[title]} --scope …` or remove the plugin",
                    files=paths,
                )
            )
    if working == 0:
        checks.append(
            Check(
                "registrations",
                FAIL,
                "no harness runs a working lich-hook",
                "run `lich-hook install claude` (or codex, crush, antigravity): docs/install.md",
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
    try:
        executable: str | None = settings_files.this_executable()
    except settings_files.Refused:
        executable = None
    return [
        check_install(executable),
        *check_variables(environ),
        *check_listener(environ),
        *check_bin(environ),
        *check_registrations(environ, project),
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


def run(
    as_json: bool = False,
    out: Callable[[str], None] = print,
    environ: Mapping[str, str] | None = None,
    project: str | None = None,
    color: bool = False,
) -> int:
    env = os.environ if environ is None else environ
    checks = collect(env, os.getcwd() if project is None else project)
    ok = all(check.status != FAIL for check in checks)
    rows = RunLog(env).scrub([c.as_dict() for c in checks])
    assert isinstance(rows, list)
    if as_json:
        import json

        report = {"ok": ok, "version": __version__, "checks": rows}
        out(json.dumps(report, indent=2, ensure_ascii=False))
        return 0 if ok else 1
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
    return 0 if ok else 1
