"""Stand-ins for a `crush server` and its clients, as real processes (for CI without Crush).

Like tests/codex_daemon/fake_codex.py: an executable named `crush` (a symlink
to Python), the server run as `crush server` (Python runs the `server/`
folder) on Crush's own socket path, `$XDG_RUNTIME_DIR/crush-<uid>.sock`. It
answers the two API calls the attribution makes, `GET /v1/workspaces` and
`GET /v1/workspaces/{id}/sessions/{sid}`, from workspaces the test adds, and
runs hook commands as Crush does: its own environment, cwd = the workspace,
payload on stdin. A client holds a connection open, as a TUI's event stream does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SERVER_MAIN = r"""
import json, os, socket, subprocess, sys, threading
path = os.path.join(os.environ["XDG_RUNTIME_DIR"], f"crush-{os.getuid()}.sock")
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
os.chmod(path, 0o777)  # a client of another user may connect, as root can to Crush's
listener.listen(16)
spaces = []
held = []
asked = []
raw = []
def answer(conn):
    data = conn.recv(4096)
    if data.startswith(b"HOLD"):
        held.append(conn)
        conn.sendall(b"ok")
        return
    target = data.split(b" ", 2)[1].decode()
    asked.append(target)
    parts = target.strip("/").split("/")
    status, body = 404, b'{"message":"not found"}'
    if parts == ["v1", "workspaces"]:
        shown = [{k: v for k, v in w.items() if k != "sessions"} for w in spaces]
        status, body = 200, json.dumps(shown).encode()
        if raw:
            with open(raw[-1], "rb") as handle:
                body = handle.read()
    elif len(parts) == 5 and parts[:2] == ["v1", "workspaces"] and parts[3] == "sessions":
        for w in spaces:
            for entry in w["sessions"]:
                sid, _, shown = entry.partition(":")  # "sid:0": no TUI shows it
                if w["id"] == parts[2] and sid == parts[4]:
                    view = {"id": sid, "attached_clients": int(shown or 1)}
                    status, body = 200, json.dumps(view).encode()
    conn.sendall(b"HTTP/1.0 %d X\r\nContent-Type: application/json\r\n\r\n" % status + body)
    conn.close()
def accept():
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=answer, args=(conn,), daemon=True).start()
threading.Thread(target=accept, daemon=True).start()
print("listening", flush=True)
for line in sys.stdin:
    job = json.loads(line)
    if "workspace" in job:
        spaces.append(job["workspace"])
        print("{}", flush=True)
        continue
    if "raw" in job:
        raw.append(job["raw"])
        print("{}", flush=True)
        continue
    if "asked" in job:
        print(json.dumps({"asked": asked}), flush=True)
        continue
    ran = subprocess.run(["/bin/sh", "-c", job["command"]], input=job["payload"].encode(),
                         cwd=job["cwd"], env=dict(os.environ), capture_output=True)
    print(json.dumps({"rc": ran.returncode, "stdout": ran.stdout.decode(),
                      "stderr": ran.stderr.decode()}), flush=True)
"""

CLIENT_MAIN = r"""
import os, socket, sys
if os.environ.get("FAKE_CRUSH_UNDUMPABLE"):  # /proc/<pid>/fd and environ: root's only
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(os.environ["FAKE_CRUSH_SOCKET"])
conn.sendall(b"HOLD")
conn.recv(2)
print("connected", flush=True)
sys.stdin.read()
"""


class FakeCrush:
    """One fake server (started with a card's environment) and its clients."""

    def __init__(
        self, root: Path, run_dir: Path, user: int | None = None, python: str = sys.executable
    ) -> None:
        programs = root / "programs"
        for folder in (root / "bin", programs / "server", programs / "tui"):
            folder.mkdir(parents=True, exist_ok=True)
        (programs / "server" / "__main__.py").write_text(SERVER_MAIN)
        (programs / "tui" / "__main__.py").write_text(CLIENT_MAIN)
        self.crush = root / "bin" / "crush"
        self.python = os.path.realpath(python)
        self.crush.symlink_to(self.python)
        self.programs = programs
        self.run_dir = run_dir
        self.user = user  # every process runs as this uid (root only)
        self.socket = run_dir / f"crush-{os.getuid() if user is None else user}.sock"
        self.server: subprocess.Popen[str] | None = None
        self.clients: list[subprocess.Popen[str]] = []

    def start_server(self, env: dict[str, str]) -> None:
        self.server = subprocess.Popen(
            [str(self.crush), "server"],
            cwd=self.programs,
            env={**env, "XDG_RUNTIME_DIR": str(self.run_dir)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            user=self.user,
            group=self.user,
        )
        assert self.server.stdout is not None
        assert self.server.stdout.readline().strip() == "listening"

    def _ask(self, job: dict[str, object]) -> dict[str, object]:
        assert self.server is not None and self.server.stdin and self.server.stdout
        self.server.stdin.write(json.dumps(job) + "\n")
        self.server.stdin.flush()
        answer: dict[str, object] = json.loads(self.server.stdout.readline())
        return answer

    def workspace(self, ident: str, path: Path, env: dict[str, str], *sessions: str) -> None:
        """A workspace as the server keeps it: `env` is its creating client's environment."""
        env_list = [f"{k}={v}" for k, v in env.items()]
        self._ask({"workspace": {"id": ident, "path": str(path), "env": env_list,
                                 "sessions": list(sessions)}})  # fmt: skip

    def answer_workspaces_with(self, path: Path) -> None:
        """From now on `GET /v1/workspaces` answers with this file's bytes."""
        self._ask({"raw": str(path)})

    def asked(self) -> list[str]:
        """Every target the server was asked for, in order."""
        answer = self._ask({"asked": True})["asked"]
        assert isinstance(answer, list)
        return [str(a) for a in answer]

    def start_client(
        self,
        env: dict[str, str],
        cwd: Path,
        name: str = "crush",
        user: int | None = None,
        dumpable: bool = True,
    ) -> subprocess.Popen[str]:
        """A client holding a connection: run as `name` (a symlink to the same Python),
        as `user` (default the server's), and non-dumpable when not `dumpable`."""
        program = self.crush.with_name(name)
        if not program.exists():
            program.symlink_to(self.python)
        user = self.user if user is None else user
        client = subprocess.Popen(
            [str(program), str(self.programs / "tui")],
            cwd=cwd,
            env={
                **env,
                "XDG_RUNTIME_DIR": str(self.run_dir),
                "FAKE_CRUSH_SOCKET": str(self.socket),
                **({} if dumpable else {"FAKE_CRUSH_UNDUMPABLE": "1"}),
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            user=user,
            group=user,
        )
        assert client.stdout is not None
        assert client.stdout.readline().strip() == "connected"
        self.clients.append(client)
        return client

    def run_hook(self, command: str, payload: dict[str, object], cwd: Path) -> dict[str, object]:
        return self._ask({"command": command, "payload": json.dumps(payload), "cwd": str(cwd)})

    def close(self) -> None:
        for proc in [*self.clients, *([self.server] if self.server else [])]:
            if proc.poll() is None:
                assert proc.stdin is not None
                proc.stdin.close()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
