"""What each way of sending a report costs before lich has it (docs/performance.md).

    python benchmarks/sender_options.py [--rounds N]

The detached sender starts from a forked hook process, so what it pays on
the way to lich is what it imports and does after the fork. Each option here
is that work as a `python -c` program: one fresh interpreter (the part every
option shares), the option's imports, the body encoded, one POST to the lich
stand-in on loopback. Timed from just before the spawn until the stand-in
holds the request, interleaved in random order, next to the shell reference
(sh + jq + curl, as in benchmarks/latency.py) and to a bare `python -c pass`
(start only: the floor under every Python option). Medians, and the median of
each option's ratio to the adjacent reference run.

This informs a choice; benchmarks/latency.py judges the real hook.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import lich_hooks
from lich_hooks.human.standin.server import Received, StandIn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import REFERENCE_SH, SESSION_START

# Each program reads the id from stdin the way the hook does (the C scanner,
# already loaded in a forked sender), then sends as the option says.
PRELUDE = """
import os, sys, _json
env = os.environ
port, token = int(env["LICH_PORT"]), env["LICH_TOKEN"]
raw = sys.stdin.buffer.read()
data = _json.make_scanner(type("C", (), dict(strict=True, object_hook=None,
    object_pairs_hook=None, parse_float=float, parse_int=int, parse_constant=float))())(
    raw.decode(), 0)[0]
body = {"session_id": env["LICH_SESSION_ID"], "provider_session_id": data["session_id"],
        "provider": "claude"}
HEADERS = {"Content-Type": "application/json", "X-Lich-Plugin": %(release)r,
           "User-Agent": "lich-hooks/%(version)s"}
"""

C_ENCODE = """
from _json import make_encoder, encode_basestring
def refuse(o): raise TypeError
data = "".join(make_encoder(None, refuse, encode_basestring, None, ":", ",",
                            False, False, False)(body, 0)).encode()
"""

OWN_QUOTE = """
UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")
q = "".join(chr(b) if b in UNRESERVED else "%%%02X" % b for b in token.encode())
"""

RAW_REQUEST = """
head = "POST /session-start?token=%s HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n" % (q, port)
head += "".join("%s: %s\\r\\n" % kv for kv in HEADERS.items())
head += "Content-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(data)
"""

SOCKET_SEND = """
s = {mod}.socket({mod}.AF_INET, {mod}.SOCK_STREAM)
s.setsockopt({mod}.IPPROTO_TCP, {mod}.TCP_NODELAY, 1)
s.settimeout(2)
s.connect(("127.0.0.1", port))
s.sendall(head.encode() + data)
s.recv(4096)
s.close()
"""

OPTIONS: dict[str, str] = {
    "requests + orjson (the old sender)": """
import orjson, requests
with requests.Session() as session:
    session.trust_env = False
    from urllib.parse import quote
    session.post(f"http://127.0.0.1:{port}/session-start?token={quote(token, safe='')}",
                 data=orjson.dumps(body), headers=HEADERS, timeout=(1, 1),
                 allow_redirects=False).close()
""",
    "http.client + C encoder": C_ENCODE
    + OWN_QUOTE
    + """
import http.client
c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
c.request("POST", "/session-start?token=" + q, body=data, headers=HEADERS)
c.getresponse().read()
c.close()
""",
    "socket + orjson": """
import orjson
data = orjson.dumps(body)
"""
    + OWN_QUOTE
    + RAW_REQUEST
    + "import socket"
    + SOCKET_SEND.format(mod="socket"),
    "socket + C encoder + urllib.parse.quote": C_ENCODE
    + """
from urllib.parse import quote
q = quote(token, safe="")
"""
    + RAW_REQUEST
    + "import socket"
    + SOCKET_SEND.format(mod="socket"),
    "socket + C encoder": C_ENCODE
    + OWN_QUOTE
    + RAW_REQUEST
    + "import socket"
    + SOCKET_SEND.format(mod="socket"),
    "_socket + C encoder (chosen)": C_ENCODE
    + OWN_QUOTE
    + RAW_REQUEST
    + "import _socket"
    + SOCKET_SEND.format(mod="_socket"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args(argv)
    arrived = threading.Condition()
    arrivals: list[tuple[float, Received]] = []

    def on_request(received: Received) -> None:
        with arrived:
            arrivals.append((time.perf_counter(), received))
            arrived.notify_all()

    prelude = PRELUDE % {"release": lich_hooks.PLUGIN_RELEASE, "version": lich_hooks.__version__}
    with (
        tempfile.TemporaryDirectory(prefix="lich-senders-") as name,
        StandIn(on_request=on_request) as lich,
    ):
        reference = Path(name) / "report.sh"
        reference.write_text(
            REFERENCE_SH.replace("{version}", lich_hooks.__version__).replace(
                "{release}", lich_hooks.PLUGIN_RELEASE
            )
        )
        reference.chmod(0o755)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **lich.env("card-bench")}
        commands = {"python -c pass (start only)": [sys.executable, "-c", "pass"]}
        commands.update({k: [sys.executable, "-c", prelude + v] for k, v in OPTIONS.items()})
        commands["shell reference (sh+jq+curl)"] = [str(reference), "claude"]
        times: dict[str, list[float]] = {key: [] for key in commands}
        ratios: dict[str, list[float]] = {key: [] for key in commands}

        def once(key: str) -> float:
            with arrived:
                seen = len(arrivals)
            started = time.perf_counter()
            proc = subprocess.run(commands[key], input=SESSION_START, env=env, check=False)
            if key.startswith("python -c pass"):
                return time.perf_counter() - started
            with arrived:
                arrived.wait_for(lambda: len(arrivals) > seen, timeout=5)
                if len(arrivals) == seen or arrivals[seen][1].status != 204 or proc.returncode:
                    raise SystemExit(f"{key}: lich did not take the report")
                return arrivals[seen][0] - started

        ref = "shell reference (sh+jq+curl)"
        for key in commands:  # warm-up, and a check that every option really reports
            once(key)
        rng = random.Random(1)
        for _ in range(args.rounds):
            order = [key for key in commands if key != ref]
            rng.shuffle(order)
            for key in order:
                pair = [key, ref]
                rng.shuffle(pair)
                got = {one: once(one) for one in pair}
                times[key].append(got[key])
                times[ref].append(got[ref])
                ratios[key].append(got[key] / got[ref])

    print(
        f"spawn -> lich holds the report, {args.rounds} interleaved rounds, {os.cpu_count()} CPUs"
    )
    print(f"{'option':44} {'median':>8} {'ratio':>10}")
    for key in commands:
        ratio = f"{statistics.median(ratios[key]):5.2f} x sh" if ratios[key] else ""
        print(f"{key:44} {statistics.median(times[key]) * 1000:6.1f}ms {ratio:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
