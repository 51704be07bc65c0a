"""The real CLIs, installed once per version from the npm registry into a cache folder.

Each CLI ships in an npm package (a native binary in an optional dependency per
platform, or for Claude Code before 2.1.113 a node script; omp a Bun script with
Bun installed beside it), so `npm install --ignore-scripts` is all it takes and
nothing is downloaded when they run. `MATRIX` lists the versions the suite runs
against and why each; `selected` picks this run's. The cache lives in the repository's
ignored `.cache/clients/<package>-<version>/` (or `$LICH_TEST_CLIENTS_DIR`), never
in the real home. No npm, no registry, or an unsupported platform is a skip
with the reason, never a failure: these tests prove the hooks against real
clients when they can be had, they are not the only proof.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
# Crush: a Go module, built from the Go module proxy (the npm package downloads its binary
# from elsewhere and cannot install here). Not in MATRIX yet: MATRIX installs from npm.
CRUSH_VERSION = os.environ.get("LICH_TEST_CRUSH_VERSION", "v0.90.0")
CRUSH_MODULE = "github.com/charmbracelet/crush"
INSTALL_TIMEOUT = 600
GO_BUILD_TIMEOUT = 1800  # a cold build is ~5 min on 2 busy cores (docs/harnesses.md)


def run_cli(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """A command as a person runs it in a terminal: no stdin, text out, never raising."""
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class Pin:
    """One version of a harness the suite runs against, and why that one."""

    def __init__(self, version: str, why: str, ci: bool = False) -> None:
        self.version = version
        self.why = why
        self.ci = ci  # the default run (CI) includes it; every Pin runs under LICH_TEST_MATRIX=full

    def __repr__(self) -> str:
        return self.version


NEWEST = "the newest release that installs here"


class Harness:
    """A harness's npm package and its version matrix, oldest first; the last Pin is newest."""

    def __init__(self, key: str, package: str, pins: tuple[Pin, ...]) -> None:
        self.key = key
        self.package = package
        self.pins = pins
        # LICH_TEST_CLAUDE_CODE_VERSION=<v> runs exactly that version
        self.env = "LICH_TEST_" + key.upper().replace("-", "_") + "_VERSION"

    @property
    def newest(self) -> str:
        return self.pins[-1].version

    @property
    def oldest(self) -> str:
        return self.pins[0].version


# The version matrix (docs/harnesses.md, "Supported versions", says what each one showed).
# A new harness, or a new version of one, is one line here. Default run: the Pins marked ci
# (the newest, and the oldest that exercises a fallback); LICH_TEST_MATRIX=full: every Pin.
MATRIX: dict[str, Harness] = {
    h.key: h
    for h in (
        Harness(
            "claude-code",
            "@anthropic-ai/claude-code",
            (
                Pin(
                    "2.1.45",
                    "oldest verified: no last_assistant_message (the transcript read), the tool "
                    "is Task, no background_tasks, no CLAUDE_CODE_SESSION_ATTENDED (the process "
                    "check decides interactive sessions); node cli.js, not a native binary",
                    ci=True,
                ),
                Pin("2.1.47", "adds Stop's last_assistant_message"),
                Pin("2.1.63", "the subagent tool is named Agent (was Task)"),
                Pin("2.1.145", "adds Stop's background_tasks; a native binary from 2.1.113"),
                Pin("2.1.178", "a teammate is picked by `name` alone (team_name ignored)"),
                Pin("2.1.269", "adds CLAUDE_CODE_SESSION_ATTENDED (CLAUDE_PID from 2.1.213)"),
                Pin("2.1.281", "a deny reaches the model as `PreToolUse:<tool> hook error: …`"),
                Pin("2.1.332", NEWEST, ci=True),
            ),
        ),
        Harness(
            "codex",
            "@openai/codex",
            (
                Pin("0.156.1", "oldest verified: the last without the app-server daemon", ci=True),
                Pin("0.157.0", "the interactive TUI runs hooks in the shared daemon"),
                Pin("0.171.0", NEWEST, ci=True),
            ),
        ),
        # opencode and omp: the versions the module harnesses were measured on. omp runs on
        # Bun (BUN_VERSION, installed beside it); 18.3.x and 18.2.9 do not install (their
        # pinned @oh-my-pi/* dependencies are missing from the registry), 18.2.3 does.
        Harness("opencode", "opencode-ai", (Pin("1.18.33", NEWEST, ci=True),)),
        Harness("omp", "@oh-my-pi/pi-coding-agent", (Pin("18.2.3", NEWEST, ci=True),)),
    )
}
BUN_VERSION = os.environ.get("LICH_TEST_BUN_VERSION", "1.4.5")


def selected(key: str, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The versions of harness `key` this run tests.

    `LICH_TEST_<HARNESS>_VERSION` names exactly one; else `LICH_TEST_MATRIX`: unset or `ci` →
    the Pins marked ci, `newest` → the newest only, `full` → every Pin, or a list such as
    `claude-code=2.1.45,2.1.332 codex=0.156.1` (a harness it does not name: its newest).
    """
    harness = MATRIX[key]
    one = environ.get(harness.env)
    if one:
        return [one]
    matrix = environ.get("LICH_TEST_MATRIX", "ci").strip() or "ci"
    if matrix == "full":
        return [pin.version for pin in harness.pins]
    if matrix == "newest":
        return [harness.newest]
    if matrix == "ci":
        return [pin.version for pin in harness.pins if pin.ci]
    named = dict(item.partition("=")[::2] for item in matrix.replace(";", " ").split())
    if key in named:
        return [v for v in named[key].split(",") if v]
    return [harness.newest]


def version_key(version: str) -> tuple[int, ...]:
    """`2.1.45` → (2, 1, 45), for ordering; a suffix such as `-beta` is ignored."""
    return tuple(int(part) for part in version.split("-")[0].split(".") if part.isdigit())


def cache_root() -> Path:
    configured = os.environ.get("LICH_TEST_CLIENTS_DIR")
    return Path(configured) if configured else REPO / ".cache" / "clients"


class Client:
    """An installed CLI: its binary, the release installed, and the version it reports."""

    def __init__(self, name: str, binary: Path, version: str, release: str = "") -> None:
        self.name = name
        self.binary = binary
        self.version = version
        self.release = release or version.split()[0]

    def at_least(self, release: str) -> bool:
        """This release is `release` or newer (a behaviour that came in `release` is here)."""
        return version_key(self.release) >= version_key(release)

    def __repr__(self) -> str:
        return f"{self.name} {self.version} ({self.binary})"


def _install(package: str, version: str, *extra: str) -> Path:
    """`npm install --prefix <cache>/<pkg>-<version> <package>@<version> [extra…]`, once.

    `extra` are further `name@version` specs installed beside it (omp's Bun):
    they are part of the folder's name, so a different pin gets its own folder.
    No npm, a failed or too slow install: skip with the reason.
    """
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not on PATH: cannot install {package}@{version}")
    name = f"{package.replace('/', '+').lstrip('@')}-{version}"
    for spec in extra:
        name += "+" + spec.lstrip("@").replace("/", "+").replace("@", "-")
    folder = cache_root() / name
    folder.mkdir(parents=True, exist_ok=True)
    done = folder / ".installed"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel sessions install once
        if done.exists():
            return folder
        try:
            proc = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(folder),
                    "--ignore-scripts",  # the native binary needs no postinstall when run directly
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--loglevel=error",
                    "--fetch-retries=1",  # an unreachable registry is a quick skip, not a stall
                    "--fetch-timeout=60000",
                    f"{package}@{version}",
                    *extra,
                ],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                check=False,
                env={
                    **os.environ,
                    "npm_config_update_notifier": "false",
                    # onnxruntime-node (an omp dependency) would fetch CUDA libraries if its
                    # postinstall ran; scripts are off, this keeps it off if they are not
                    "ONNXRUNTIME_NODE_INSTALL_CUDA": "skip",
                    # npm's own cache and logs in the install folder, not the real ~/.npm
                    "npm_config_cache": str(folder / ".npm-cache"),
                },
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {package}@{version} took over {INSTALL_TIMEOUT}s")
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            pytest.skip(f"npm install {package}@{version} failed: {' | '.join(tail)}")
        shutil.rmtree(folder / ".npm-cache", ignore_errors=True)  # the tarballs, ~300 MB
        done.write_text(" ".join([f"{package}@{version}", *extra]) + "\n")
    return folder


def _first(folder: Path, patterns: list[str]) -> Path | None:
    for pattern in patterns:
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and os.access(path, os.X_OK):
                return path
    return None


def _version(binary: Path) -> str:
    # even `--version` sets up state (Codex writes helpers under CODEX_HOME): a throwaway home
    with tempfile.TemporaryDirectory(prefix="lich-client-home-") as home:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8"}
        env["CODEX_HOME"] = os.path.join(home, ".codex")
        proc = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=env,
        )
    if proc.returncode != 0:
        pytest.skip(f"{binary} --version failed: {proc.stderr.strip()[-200:]}")
    return proc.stdout.strip()


def claude_code(version: str) -> Client:
    folder = _install(MATRIX["claude-code"].package, version)
    # native binary from 2.1.113; before that the package's cli.js, run by node through the
    # `claude` link npm makes (so the process is `node …/.bin/claude`, as a user's is)
    binary = _first(
        folder, ["node_modules/@anthropic-ai/claude-code-*/claude", "node_modules/.bin/claude"]
    )
    if binary is None:
        pytest.skip(f"no Claude Code binary for this platform under {folder}")
    if binary.name == "claude" and binary.parent.name == ".bin" and shutil.which("node") is None:
        pytest.skip(f"Claude Code {version} is a node script and node is not on PATH")
    return Client("claude-code", binary, _version(binary), version)


def codex(version: str) -> Client:
    folder = _install(MATRIX["codex"].package, version)
    binary = _first(
        folder,
        [
            "node_modules/@openai/codex-*/vendor/*/bin/codex",
            "node_modules/@openai/codex-*/vendor/*/codex/codex",
            "node_modules/@openai/codex/vendor/*/codex/codex",
        ],
    )
    if binary is None:
        pytest.skip(f"no native Codex binary for this platform under {folder}")
    return Client("codex", binary, _version(binary), version)


def opencode(version: str) -> Client:
    folder = _install(MATRIX["opencode"].package, version)
    # the platform package (opencode-linux-x64…), not opencode-ai's node launcher
    binary = _first(folder, ["node_modules/opencode-*-*/bin/opencode"])
    if binary is None:
        pytest.skip(f"no native opencode binary for this platform under {folder}")
    return Client("opencode", binary, _version(binary), version)


class OmpClient(Client):
    """omp is a Bun script: `bin_dir` holds a `bun` for its `#!/usr/bin/env bun` line."""

    def __init__(self, binary: Path, version: str, bin_dir: Path, release: str = "") -> None:
        super().__init__("omp", binary, version, release)
        self.bin_dir = bin_dir


def omp(version: str) -> OmpClient:
    folder = _install(MATRIX["omp"].package, version, f"bun@{BUN_VERSION}")
    # --ignore-scripts leaves bun's own launcher a placeholder: use the platform binary
    bun = _first(folder, ["node_modules/@oven/bun-*/bin/bun"])
    script = folder / "node_modules" / "@oh-my-pi" / "pi-coding-agent" / "dist" / "cli.js"
    if bun is None or not script.is_file():
        pytest.skip(f"no Bun binary for this platform (or no omp) under {folder}")
    bin_dir = folder / "lich-bin"
    bin_dir.mkdir(exist_ok=True)
    try:
        (bin_dir / "bun").symlink_to(bun)
    except FileExistsError:
        pass  # an earlier run (or a parallel session) made it
    with tempfile.TemporaryDirectory(prefix="lich-client-home-") as home:
        shown = subprocess.run(
            [str(bun), str(script), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": home, "OMP_SKIP_SETUP": "1"},
        )
    if shown.returncode != 0:
        pytest.skip(f"omp --version failed: {shown.stderr.strip()[-200:]}")
    return OmpClient(script, shown.stdout.strip(), bin_dir, version)


def crush() -> Client:
    """`go install github.com/charmbracelet/crush@<v>` into `<cache>/crush-<v>/bin`, once.

    GOPATH, GOMODCACHE and GOCACHE live in the folder (never the real home)
    and are removed after the build: only the binary stays. No `go`, a proxy
    that refuses the module, or a failed build: skip with the reason.
    """
    folder = cache_root() / f"crush-{CRUSH_VERSION}"
    binary = folder / "bin" / "crush"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel sessions build once
        if not (folder / ".installed").exists():
            _go_install(folder, CRUSH_MODULE, CRUSH_VERSION)
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"{folder} holds no crush binary")
    return Client("crush", binary, _version(binary).rsplit(" ", 1)[-1])


def _go_install(folder: Path, module: str, version: str) -> None:
    go = shutil.which("go")
    if go is None:
        pytest.skip(f"go is not on PATH: cannot build {module}@{version}")
    work = folder / "go"
    env = {
        **os.environ,
        "GOBIN": str(folder / "bin"),
        "GOPATH": str(work),
        "GOMODCACHE": str(work / "mod"),
        "GOCACHE": str(work / "cache"),
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",  # never fetch another Go
    }
    try:
        proc = subprocess.run(
            [go, "install", f"{module}@{version}"],
            capture_output=True,
            text=True,
            timeout=GO_BUILD_TIMEOUT,
            check=False,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"go install {module}@{version} took over {GO_BUILD_TIMEOUT}s")
    finally:
        # the module cache is read-only files: `go clean` removes it (~2.5 GB with the build cache)
        subprocess.run(
            [go, "clean", "-modcache", "-cache"],
            capture_output=True,
            timeout=300,
            check=False,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-2:]
        pytest.skip(f"go install {module}@{version} failed: {' | '.join(tail)}")
    (folder / ".installed").write_text(f"go install {module}@{version}\n")
