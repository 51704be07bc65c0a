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
them): each connection a TUI opens, its startup request, a thread's start, and a
row after each hook dated a minute ahead, so no test waits for one.
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
import base64, hashlib, itertools, json, os, resource, socket, sqlite3, struct, subprocess, sys
import threading, time, uuid
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
path = os.environ["FAKE_CODEX_SOCKET"]
me = f"pid:{os.getpid()}:{uuid.uuid4()}"
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(16)
held = []
buffered, lock = [], threading.Lock()
def write_cycle():  # what it logged, written every FAKE_CODEX_TICK s (Codex 0.171.0: 10 s)
    while True:
        time.sleep(float(os.environ["FAKE_CODEX_TICK"]))
        with lock:
            rows = buffered[:]
            buffered.clear()
        if rows and os.environ.get("FAKE_CODEX_LOGGED") != "never":
            db = sqlite3.connect(os.environ["FAKE_CODEX_LOG"], timeout=5)
            db.executemany("INSERT INTO logs (ts, ts_nanos, level, target, feedback_log_body, "
                           "process_uuid) VALUES (?, ?, 'INFO', 'codex_app_server', ?, ?)", rows)
            db.commit()
            db.close()
ids = itertools.count(1000)
def frame(conn):
    head = conn.recv(2, socket.MSG_WAITALL)
    if len(head) < 2:
        return 8, b""
    size = head[1] & 0x7F
    if size == 126:
        size = struct.unpack(">H", conn.recv(2, socket.MSG_WAITALL))[0]
    elif size == 127:
        size = struct.unpack(">Q", conn.recv(8, socket.MSG_WAITALL))[0]
    mask = conn.recv(4, socket.MSG_WAITALL)
    data = conn.recv(size, socket.MSG_WAITALL) if size else b""
    return head[0] & 0x0F, bytes(b ^ mask[i % 4] for i, b in enumerate(data))
def serve(conn):
    first = conn.recv(1)
    if first == b"c":  # a TUI: held for the daemon's life
        conn.sendall(b"hi")  # the client knows it is accepted (in our fd table)
        return
    data = first  # a WebSocket client on the control socket (nudge.py)
    while first and b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        data += chunk
        first = chunk
    if not first:  # gone before its handshake
        held.remove(conn)
        conn.close()
        return
    key = [l.split(b":", 1)[1].strip() for l in data.split(b"\r\n")
           if l.lower().startswith(b"sec-websocket-key:")][0]
    accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
    connection = next(ids)
    while True:
        opcode, payload = frame(conn)
        if opcode == 8:
            held.remove(conn)
            conn.close()  # before the client reads EOF, as Codex's does
            return
        request = json.loads(payload)
        when = time.time()
        with lock:
            buffered.append((int(when), int(when % 1 * 1e9), f"app-server request: "
                             f"{request['method']} connection_id=ConnectionId({connection}) "
                             f"request_id=Integer({request['id']})", me))
        answer = json.dumps({"id": request["id"], "result": {"userAgent": "fake"}}).encode()
        conn.sendall(bytes([0x81, len(answer)]) + answer)
def accept():
    while True:
        conn, _ = server.accept()
        held.append(conn)
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
threading.Thread(target=accept, daemon=True).start()
threading.Thread(target=write_cycle, daemon=True).start()
print("listening", me, flush=True)
spare = []
for line in sys.stdin:
    job = json.loads(line)
    if "sockets" in job:  # a busy daemon: that many more connected Unix sockets (two each)
        spare.extend(socket.socketpair() for _ in range(job["sockets"]))
        print("{}", flush=True)
        continue
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CODEX_")}
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
conn.sendall(b"c")
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

    def start_daemon(
        self, env: dict[str, str], home: Path | None = None, tick: float = 0.2, logged: str = ""
    ) -> None:
        """`home`: where its log is, if not CODEX_HOME (a relative one is the hook's cwd's).
        A request on its control socket (CODEX_HOME/app-server-control/…, a WebSocket) is
        logged and written with its next write, every `tick` s; `logged="never"`: never."""
        home = home or Path(env.get("CODEX_HOME") or Path(env["HOME"]) / ".codex")
        home.mkdir(parents=True, exist_ok=True)
        self.log_path = home / "logs_2.sqlite"
        self.db = sqlite3.connect(self.log_path, isolation_level=None)
        self.db.executescript(SCHEMA)
        control = home / "app-server-control" / "app-server-control.sock"
        if not control.exists():
            control.parent.mkdir(exist_ok=True)
            control.symlink_to(self.socket)
        self.daemon = subprocess.Popen(
            [str(self.codex), "app-server", "--listen", "unix://", "--managed-daemon"],
            cwd=self.programs,
            env={
                **env,
                "FAKE_CODEX_SOCKET": self.socket,
                "FAKE_CODEX_LOG": str(self.log_path),
                "FAKE_CODEX_TICK": str(tick),
                "FAKE_CODEX_LOGGED": logged,
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.daemon.stdout is not None
        word, self.uuid = self.daemon.stdout.readline().split()
        assert word == "listening"

    def start_client(
        self,
        env: dict[str, str],
        cwd: Path,
        *args: str,
        name: str = "codex",
        connect: float = 0.002,
        request: float = 0.002,
        opens: float = 0.5,
    ) -> subprocess.Popen[str]:
        """A client TUI; `name` the executable it is started as (a symlink `cx` is not codex);
        as 0.171.0 logs one: `initialize` for two probes and its session's connection, opened
        `opens` of the way to its connect row (`connect` s after its start), which asks
        `account/read` before it; its first thread request `request` s after its connect (a
        `codex resume <id>`'s resume of that thread, a plain TUI's startup request)."""
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
        start = started_at(client.pid)
        assert start is not None
        born, ready = start + opens * connect, start + connect
        for probe in range(3):  # two probes, then the session's connection
            self.request(born - (2 - probe) * 1e-4, "initialize", self.accepted, 1)
            self.accepted += 1
        self.connections[client.pid] = connection = self.accepted - 1
        self.request((born + ready) / 2, "account/read", connection, 1)
        writer = f"pid:{client.pid}:{uuid.uuid4()}"  # the TUI's own row
        self.log(ready, "", 0, None, body=CONNECTED, writer=writer)
        if "resume" in args and not args[-1].startswith(("-", "resume")):
            self.request(ready + request, "thread/resume", connection, 11)
            self.log(ready + request + 0.01, "thread/resume", connection, args[-1], "11")
        elif not {"resume", "fork", "agents"} & set(args):
            # the request's own line (threadless), then its span's row with the TUI's first thread
            startup = f"startup-thread-start-{uuid.uuid4()}"
            self.request(ready + request, "thread/start", connection, startup)
            first = str(uuid.uuid4())
            self.log(ready + request + 0.01, "thread/start", connection, first, startup)
        return client

    def request(self, when: float, method: str, connection: int, request: int | str) -> None:
        """The daemon's line as it takes a request (no thread id)."""
        named = f"Integer({request})" if isinstance(request, int) else f'String("{request}")'
        line = f"app-server request: {method} connection_id=ConnectionId({connection}) "
        self.log(when, "", 0, None, body=line + f"request_id={named}")

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

    def prune(self) -> None:
        """Codex drops the daemon's oldest rows without a thread (it keeps 1,000): all, here."""
        assert self.db is not None
        self.db.execute(
            "DELETE FROM logs WHERE process_uuid = ? AND thread_id IS NULL", (self.uuid,)
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
        turn: bool = True,
    ) -> dict[str, object]:
        """Run `command` as the daemon runs a hook; its exit code, stdout and stderr.

        `by`: the client whose connection started the payload's thread (logged first).
        `turn=False`: the daemon logs nothing after it (a turn that failed at once).

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
        if self.db is not None and turn:  # the turn goes on: a later row, past every startup one
            self.log(time.time() + 60, "turn/start", 0, None, body="turn")
        return result

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
