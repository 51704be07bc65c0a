"""Stand-ins for Codex's shared app-server daemon and its client TUIs, as real processes.

The attribution reads real /proc entries and asks the kernel for real socket
peers, so the fakes are real processes that look like Codex where it looks:
an executable named `codex` (a symlink to Python: the kernel names the process
after it), argv `codex app-server --listen unix:// --managed-daemon` for the
daemon, a connected Unix socket, a working directory and LICH_* for each
client. The daemon runs hook commands the way Codex 0.171.0 does: `sh -c`,
its own environment, cwd = the conversation's directory, payload on stdin.
Python runs the directory named by argv[1] (`app-server/__main__.py`), which
is how the daemon's argv[1] can be `app-server`. `log` writes the rows Codex
0.171.0's daemon logs in CODEX_HOME/logs_2.sqlite (decide.from_evidence reads
them): a TUI's startup request, a thread's start, and a row after each hook
dated a minute ahead, so no test waits for one.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

from lich_hooks.hook.shared.codex.probe import started_at

SCHEMA = """CREATE TABLE logs (id INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL,
ts_nanos INTEGER NOT NULL, level TEXT NOT NULL, target TEXT NOT NULL, feedback_log_body TEXT,
module_path TEXT, file TEXT, line INTEGER, thread_id TEXT, process_uuid TEXT,
estimated_bytes INTEGER NOT NULL DEFAULT 0);
CREATE INDEX idx_logs_ts ON logs(ts DESC, ts_nanos DESC, id DESC);
CREATE INDEX idx_logs_thread_id_ts ON logs(thread_id, ts DESC, ts_nanos DESC, id DESC);"""
CONNECTED = "connected app-server platform has_platform_family=true has_platform_os=true"
SPAN = (
    'app_server.request{{otel.kind="server" otel.name="{method}" rpc.system="jsonrpc" '
    'rpc.method="{method}" rpc.transport="unix_socket" rpc.request_id={request} '
    'app_server.connection_id={connection} app_server.api_version="v2" '
    'app_server.client_name="codex-tui" app_server.client_version="0.171.0"}}: created'
)

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
        self.db: sqlite3.Connection | None = None
        self.connections: dict[int, int] = {}  # client pid -> its session connection id
        self.accepted = 0

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
        home = Path(env.get("CODEX_HOME") or Path(env["HOME"]) / ".codex")
        home.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(home / "logs_2.sqlite", isolation_level=None)
        self.db.executescript(SCHEMA)
        self.uuid = f"pid:{self.daemon.pid}:{uuid.uuid4()}"

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
        self.accepted += 3  # two probes, then the session's connection
        self.connections[client.pid] = connection = self.accepted - 1
        start = started_at(client.pid)
        if start is not None and not {"resume", "fork", "agents"} & set(args):
            request = f"startup-thread-start-{uuid.uuid4()}"
            writer = f"pid:{client.pid}:{uuid.uuid4()}"  # the TUI's own row, then the daemon's
            self.log(start + 0.002, "", 0, None, body=CONNECTED, writer=writer)
            self.log(start + 0.004, "thread/start", connection, None, request)
        return client

    def log(
        self,
        when: float,
        method: str,
        connection: int,
        thread: str | None,
        request: str = "8",
        body: str | None = None,
        writer: str | None = None,
    ) -> None:
        """One daemon row, as 0.171.0 writes a request's span."""
        assert self.db is not None
        text = body or SPAN.format(method=method, request=request, connection=connection)
        self.db.execute(
            "INSERT INTO logs (ts, ts_nanos, level, target, feedback_log_body, thread_id, "
            "process_uuid) VALUES (?, ?, 'INFO', 'codex_app_server', ?, ?, ?)",
            (int(when), int(when % 1 * 1e9), text, thread, writer or self.uuid),
        )

    def started_by(
        self, client: subprocess.Popen[str], thread: str, method: str = "thread/start"
    ) -> None:
        """The daemon logs that `client`'s connection started (or resumed) `thread`."""
        self.log(time.time(), method, self.connections[client.pid], thread)

    def run_hook(
        self,
        command: str,
        payload: dict[str, object],
        cwd: Path,
        timed: bool = False,
        by: subprocess.Popen[str] | None = None,
    ) -> dict[str, object]:
        """Run `command` as the daemon runs a hook; its exit code, stdout and stderr.

        `by`: the client whose connection started the payload's thread (logged first).

        `timed` adds when the daemon spawned it (`started`, time.perf_counter's
        clock) and how long it waited for it (`seconds`), for benchmarks.
        """
        assert self.daemon is not None and self.daemon.stdin and self.daemon.stdout
        if by is not None:
            self.started_by(by, str(payload["session_id"]))
        job = {"command": command, "payload": json.dumps(payload), "cwd": str(cwd), "timed": timed}
        self.daemon.stdin.write(json.dumps(job) + "\n")
        self.daemon.stdin.flush()
        result: dict[str, object] = json.loads(self.daemon.stdout.readline())
        if self.db is not None:  # the turn goes on: a later row, past every startup request
            self.log(time.time() + 60, "turn/start", 0, None, body="turn")
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
