"""The real CLIs, installed once per version from the npm registry into a cache folder.

Both CLIs ship their native binary inside an npm package (an optional
dependency per platform), so `npm install --ignore-scripts` is all it takes and
nothing is downloaded when they run. The cache lives in the repository's
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
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

# Pinned so a run is reproducible. 2.1.328 is the Claude Code docs/harnesses.md describes.
CLAUDE_CODE_VERSION = os.environ.get("LICH_TEST_CLAUDE_CODE_VERSION", "2.1.328")
CODEX_VERSION = os.environ.get("LICH_TEST_CODEX_VERSION", "0.171.0")
# opencode and omp: the versions the module harnesses were measured on (docs/harnesses.md).
# omp runs on Bun, installed beside it from npm; 18.3.x's pinned @oh-my-pi/* deps do not all
# resolve on the registry, 18.2.3's do.
OPENCODE_VERSION = os.environ.get("LICH_TEST_OPENCODE_VERSION", "1.18.33")
OMP_VERSION = os.environ.get("LICH_TEST_OMP_VERSION", "18.2.3")
BUN_VERSION = os.environ.get("LICH_TEST_BUN_VERSION", "1.4.5")
# Crush: a Go module, built from the Go module proxy (the npm package downloads its binary
# from elsewhere and cannot install here).
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


def cache_root() -> Path:
    configured = os.environ.get("LICH_TEST_CLIENTS_DIR")
    return Path(configured) if configured else REPO / ".cache" / "clients"


class Client:
    """An installed CLI: its native binary and the version it reports."""

    def __init__(self, name: str, binary: Path, version: str) -> None:
        self.name = name
        self.binary = binary
        self.version = version

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


def claude_code() -> Client:
    folder = _install("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION)
    binary = _first(folder, ["node_modules/@anthropic-ai/claude-code-*/claude"])
    if binary is None:
        pytest.skip(f"no native Claude Code binary for this platform under {folder}")
    return Client("claude-code", binary, _version(binary))


def codex() -> Client:
    folder = _install("@openai/codex", CODEX_VERSION)
    binary = _first(
        folder,
        [
            "node_modules/@openai/codex-*/vendor/*/bin/codex",
            "node_modules/@openai/codex-*/vendor/*/codex/codex",
        ],
    )
    if binary is None:
        pytest.skip(f"no native Codex binary for this platform under {folder}")
    return Client("codex", binary, _version(binary))


def opencode() -> Client:
    folder = _install("opencode-ai", OPENCODE_VERSION)
    # the platform package (opencode-linux-x64…), not opencode-ai's node launcher
    binary = _first(folder, ["node_modules/opencode-*-*/bin/opencode"])
    if binary is None:
        pytest.skip(f"no native opencode binary for this platform under {folder}")
    return Client("opencode", binary, _version(binary))


class OmpClient(Client):
    """omp is a Bun script: `bin_dir` holds a `bun` for its `#!/usr/bin/env bun` line."""

    def __init__(self, binary: Path, version: str, bin_dir: Path) -> None:
        super().__init__("omp", binary, version)
        self.bin_dir = bin_dir


def omp() -> OmpClient:
    folder = _install("@oh-my-pi/pi-coding-agent", OMP_VERSION, f"bun@{BUN_VERSION}")
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
        version = subprocess.run(
            [str(bun), str(script), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": home, "OMP_SKIP_SETUP": "1"},
        )
    if version.returncode != 0:
        pytest.skip(f"omp --version failed: {version.stderr.strip()[-200:]}")
    return OmpClient(script, version.stdout.strip(), bin_dir)


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
