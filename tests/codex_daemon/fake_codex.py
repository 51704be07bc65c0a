"""Stand-ins for Codex's shared app-server daemon and its client TUIs, as real processes.

The attribution reads real /proc entries and asks the kernel for real socket
peers, so the fakes are real processes that look like Codex where it looks:
an executable named `codex` (a symlink to Python: the kernel names the process
after it), argv `codex app-server --listen unix:// --managed-daemon` for the
daemon, a connected Unix socket, a working directory and LICH_* for each
client. The daemon runs hook commands the way Codex 0.171.0 does: `sh -c`,
its own environment, cwd = the conversation's directory, payload on stdin.
Python runs the directory named by argv[1] (`app-server/__main__.py`), which
is how the daemon's argv[1] can be `app-server`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DAEMON_MAIN = r"""
import json, os, resource, socket, subprocess, sys, threading, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
path = os.environ["FAKE_CODEX_SOCKET"]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(16)
held = []
def accept():
    while True:
        conn, _ = server.accept()
        held.append(conn)
        conn.sendall(b"hi")  # the client knows it is accepted (in our fd table)
threading.Thread(target=accept, daemon=True).start()
print("listening", flush=True)
opened = []
spare = []
for line in sys.stdin:
    job = json.loads(line)
    if "sockets" in job:  # a busy daemon: that many more connected Unix sockets (two each)
        spare.extend(socket.socketpair() for _ in range(job["sockets"]))
        print("{}", flush=True)
        continue
    if "unload" in job:  # the daemon lets go of every session it held
        while opened:
            opened.pop().close()
        print("{}", flush=True)
        continue
    if "open" in job:  # a session's rollout, held open as the daemon holds loaded sessions
        opened.append(open(job["open"], "rb"))
        print("{}", flush=True)
        continue
    env = {k: v for k, v in os.environ.items() if k != "FAKE_CODEX_SOCKET"}
    started = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
    ran = subprocess.run(["/bin/sh", "-c", job["command"]], input=job["payload"].encode(),
                         cwd=job["cwd"], env=env, capture_output=True)
    seconds = time.perf_counter() - started  # exited and both pipes closed
    result = {"rc": ran.returncode, "stdout": ran.stdout.decode(), "stderr": ran.stderr.decode()}
    if job.get("timed"):
        result.update(started=started, seconds=seconds)
    print(json.dumps(result), flush=True)
"""

CLIENT_MAIN = r"""
import os, resource, socket, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
spare = [socket.socketpair() for _ in range(int(os.environ.get("FAKE_CODEX_SPARE", "0")))]
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(os.environ["FAKE_CODEX_SOCKET"])
conn.recv(2)
print("connected", flush=True)
sys.stdin.read()
"""


class FakeCodex:
    """One fake daemon (with the environment it was started with) and its clients."""

    def __init__(self, root: Path) -> None:
        self.root = root
        bin_dir = root / "bin"
        programs = root / "programs"
        for folder in (bin_dir, programs / "app-server", programs / "tui"):
            folder.mkdir(parents=True, exist_ok=True)
        (programs / "app-server" / "__main__.py").write_text(DAEMON_MAIN)
        (programs / "tui" / "__main__.py").write_text(CLIENT_MAIN)
        self.codex = bin_dir / "codex"
        self.codex.symlink_to(os.path.realpath(sys.executable))
        self.programs = programs
        self.socket = str(root / "daemon.sock")
        self.daemon: subprocess.Popen[str] | None = None
        self.clients: list[subprocess.Popen[str]] = []

    def start_daemon(self, env: dict[str, str]) -> None:
        self.daemon = subprocess.Popen(
            [str(self.codex), "app-server", "--listen", "unix://", "--managed-daemon"],
            cwd=self.programs,
            env={**env, "FAKE_CODEX_SOCKET": self.socket},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.daemon.stdout is not None
        assert self.daemon.stdout.readline().strip() == "listening"

    def start_client(
        self, env: dict[str, str], cwd: Path, *args: str, name: str = "codex"
    ) -> subprocess.Popen[str]:
        """A client TUI; `name` the executable it is started as (a symlink `cx` is not codex)."""
        program = self.codex.with_name(name)
        if not program.exists():
            program.symlink_to(os.path.realpath(sys.executable))
        client = subprocess.Popen(
            [str(program), str(self.programs / "tui"), *args],
            cwd=cwd,
            env={**env, "FAKE_CODEX_SOCKET": self.socket},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert client.stdout is not None
        assert client.stdout.readline().strip() == "connected"
        self.clients.append(client)
        return client

    def run_hook(
        self, command: str, payload: dict[str, object], cwd: Path, timed: bool = False
    ) -> dict[str, object]:
        """Run `command` as the daemon runs a hook; its exit code, stdout and stderr.

        `timed` adds when the daemon spawned it (`started`, time.perf_counter's
        clock) and how long it waited for it (`seconds`), for benchmarks.
        """
        assert self.daemon is not None and self.daemon.stdin and self.daemon.stdout
        job = {"command": command, "payload": json.dumps(payload), "cwd": str(cwd), "timed": timed}
        self.daemon.stdin.write(json.dumps(job) + "\n")
        self.daemon.stdin.flush()
        result: dict[str, object] = json.loads(self.daemon.stdout.readline())
        return result

    def hold_open(self, path: Path) -> None:
        """Make the daemon hold `path` open, as Codex's holds a loaded session's rollout."""
        self._ask({"open": str(path)})

    def unload(self) -> None:
        """Make the daemon close every rollout it holds, as Codex unloads idle sessions."""
        self._ask({"unload": True})

    def hold_sockets(self, pairs: int) -> None:
        """Make the daemon hold `pairs` more connected Unix socket pairs (a busy daemon)."""
        self._ask({"sockets": pairs})

    def _ask(self, job: dict[str, object]) -> None:
        assert self.daemon is not None and self.daemon.stdin and self.daemon.stdout
        self.daemon.stdin.write(json.dumps(job) + "\n")
        self.daemon.stdin.flush()
        assert self.daemon.stdout.readline().strip() == "{}"

    @staticmethod
    def stop(proc: subprocess.Popen[str]) -> None:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        for proc in [*self.clients, *([self.daemon] if self.daemon else [])]:
            self.stop(proc)
