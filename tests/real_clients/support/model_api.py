"""A scripted model API on loopback: the Anthropic Messages API, the OpenAI Responses API, and
OpenAI chat completions (opencode's `@ai-sdk/openai-compatible`, omp's `openai-completions`).

The real CLIs only need a base URL; this server answers every turn from a tiny
script written into the conversation itself, so a test says what the model
does by what it types:

- a user text containing ``[[tool:<Name> {json input}]]`` makes the model call
  that tool; several directives are played one per turn, in order (so a
  deferred tool can be loaded with ToolSearch first). Only requests that offer
  tools get them: a title or summary request quoting the text gets text;
- in chat completions, ``[[tool:<Name>*<N> {json input}]]`` makes one turn call it N times
  at once (parallel tool calls, as a model that batches them does);
- once the directives are played, the next turn is ``AFTER_TOOL_TEXT``;
- a prompt without directives gets ``REPLY_TEXT``, or, with ``[[reply*<N>:<text>]]``, `<text>`
  N times over (``[[reply:<text>]]`` once): a reply a test can tell from another turn's;
- a Responses API request quoting ``[[status:<code>]]`` is answered at once with that HTTP
  status (a provider that fails fast: offline, auth).

Every request is logged with its parsed body, so tests can assert on what the
model was shown (the tool_result a hook's verdict became) and wait for turns
to finish without sleeping.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIRECTIVE = "[[tool:"
REPLY_DIRECTIVE = re.compile(r"\[\[reply(?:\*(\d+))?:(.*?)\]\]", re.DOTALL)
STATUS_DIRECTIVE = re.compile(r"\[\[status:(\d{3})\]\]")
REPLY_TEXT = "scripted reply"
AFTER_TOOL_TEXT = "scripted final answer after the tool result"

Json = dict[str, Any]


class Request:
    """One request the CLI sent."""

    def __init__(self, method: str, path: str, headers: dict[str, str], body: Json | None) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body or {}
        self.reply: str = ""  # what the script answered: "tool:<name>", "text", ...
        self.answered: float | None = None  # epoch seconds the whole answer was written

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or []:
            if isinstance(tool, dict):
                name = tool.get("name") or (tool.get("function") or {}).get("name")
                if isinstance(name, str):
                    names.append(name)
        return names

    def __repr__(self) -> str:
        return f"<{self.method} {self.path} -> {self.reply}>"


def find_directives(text: str) -> list[tuple[str, Json]]:
    """Every top-level ``[[tool:Name {...}]]`` in `text`, in order, as (name, input).

    A directive's JSON may itself hold directives (a prompt for a subagent):
    those are skipped here and played by the subagent that reads that prompt.
    """
    found: list[tuple[str, Json]] = []
    at = 0
    while True:
        start = text.find(DIRECTIVE, at)
        if start < 0:
            return found
        rest = text[start + len(DIRECTIVE) :]
        name, _, tail = rest.partition(" ")
        stripped = tail.lstrip()
        try:
            value, used = json.JSONDecoder().raw_decode(stripped)
        except ValueError:
            at = start + len(DIRECTIVE)
            continue
        if isinstance(value, dict):
            found.append((name, value))
        at = len(text) - len(stripped) + used


TASK_ID = "{{task_id}}"


def _fill_task_id(tool_input: Json, messages: list[Json]) -> Json:
    """Put the id of the last background task Claude Code reported where TASK_ID stands.

    Lets a script stop a task whose id only exists at run time ("Command
    running in background with ID: …", "agentId: …").
    """
    raw = json.dumps(tool_input)
    if TASK_ID not in raw:
        return tool_input
    ids = [
        match
        for message in messages
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
        for match in re.findall(r"(?:with ID|agentId): (\w+)", tool_result_text(block))
    ]
    value: Json = json.loads(raw.replace(TASK_ID, ids[-1] if ids else "no-task-seen"))
    return value


def _has_tool_result(content: object) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _has_tool_use(content: object) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_use" for b in content
    )


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                out.append(block["text"])
    return out


def scripted_text(prompt: list[str]) -> str:
    """REPLY_TEXT, unless the prompt asks for its own reply (``[[reply*N:text]]``)."""
    for text in prompt:
        found = REPLY_DIRECTIVE.search(text)
        if found:
            return found.group(2) * int(found.group(1) or 1)
    return REPLY_TEXT


def messages_tool_results(body: Json) -> list[Json]:
    """Every tool_result block in a Messages request, in order."""
    results = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            results += [
                b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
    return results


def tool_result_text(block: Json) -> str:
    return "".join(_texts(block.get("content")))


class ModelAPI:
    """`with ModelAPI() as api:` then point the CLI at `api.base_url`."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ModelAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- waiting -------------------------------------------------------------------------

    def wait_for(
        self, predicate: Callable[[Request], bool], timeout: float = 60.0, what: str = ""
    ) -> Request:
        """The first logged request matching `predicate`, waiting up to `timeout` seconds."""
        found: list[Request] = []

        def check() -> bool:
            found[:] = [r for r in self.requests if predicate(r)]
            return bool(found)

        with self._changed:
            if not self._changed.wait_for(check, timeout):
                raise AssertionError(
                    f"the model never got {what or 'the expected request'} in {timeout:.0f}s; "
                    f"requests: {self.requests!r}"
                )
        return found[0]

    def model_calls(self) -> list[Request]:
        return [r for r in self.requests if r.route.endswith(("/messages", "/responses"))]

    def tool_results(self) -> list[Json]:
        """Every distinct tool_result the model was shown (Messages API), in order."""
        seen: dict[str, Json] = {}
        for request in self.model_calls():
            for block in messages_tool_results(request.body):
                seen.setdefault(str(block.get("tool_use_id")), block)
        return list(seen.values())

    # -- answering -----------------------------------------------------------------------

    def _record(self, request: Request) -> None:
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()

    def _messages_reply(self, request: Request) -> tuple[list[Json], str]:
        """Content blocks and stop reason for one Messages API turn.

        The prompt is the last user message that is not a tool result (Claude
        Code 2.1.3xx also appends role "system" messages, which are skipped).
        Its directives run in order, one per turn: the k-th tool_use turn after
        the prompt plays the k-th directive; once they are played, text.
        """
        messages = request.body.get("messages") or []
        prompt_at = -1
        for index, message in enumerate(messages):
            if message.get("role") == "user" and not _has_tool_result(message.get("content")):
                prompt_at = index
        prompt = messages[prompt_at].get("content") if prompt_at >= 0 else None
        played = sum(
            1
            for message in messages[prompt_at + 1 :]
            if message.get("role") == "assistant" and _has_tool_use(message.get("content"))
        )
        directives = [d for text in _texts(prompt) for d in find_directives(text)]
        # requests without tools (titles, summaries) quote the prompt: they get text
        if request.tool_names() and played < len(directives):
            name, tool_input = directives[played]
            tool_input = _fill_task_id(tool_input, messages)
            request.reply = f"tool:{name}"
            block = {
                "type": "tool_use",
                "id": f"toolu_01Lich{next(self._ids):04d}{secrets.token_hex(3)}",
                "name": name,
                "input": tool_input,
            }
            return [block], "tool_use"
        if played:
            request.reply = "text-after-tool"
            return [{"type": "text", "text": AFTER_TOOL_TEXT}], "end_turn"
        request.reply = "text"
        return [{"type": "text", "text": scripted_text(_texts(prompt))}], "end_turn"

    def _chat_reply(self, request: Request) -> tuple[str, list[Json]]:
        """(text, tool calls) for one chat-completions turn: the same script as Messages.

        The prompt is the last user message; each assistant message with
        `tool_calls` after it is one directive played.
        """
        messages = request.body.get("messages") or []
        prompt_at = -1
        for index, message in enumerate(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                prompt_at = index
        prompt = messages[prompt_at].get("content") if prompt_at >= 0 else None
        played = sum(
            1
            for message in messages[prompt_at + 1 :]
            if isinstance(message, dict)
            and message.get("role") == "assistant"
            and message.get("tool_calls")
        )
        directives = [d for text in _texts(prompt) for d in find_directives(text)]
        if request.tool_names() and played < len(directives):
            name, tool_input = directives[played]
            name, _, times = name.partition("*")
            request.reply = f"tool:{name}" + (f"*{times}" if times else "")
            calls = [
                {
                    "id": f"call_lich{next(self._ids):04d}{secrets.token_hex(3)}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(tool_input)},
                }
                for _ in range(int(times) if times.isdigit() else 1)
            ]
            return "", calls
        if played:
            request.reply = "text-after-tool"
            return AFTER_TOOL_TEXT, []
        request.reply = "text"
        return REPLY_TEXT, []

    def chat_calls(self) -> list[Request]:
        return [r for r in self.requests if r.route.endswith("/chat/completions")]

    def _responses_reply(self, request: Request) -> list[Json]:
        """Output items for one Responses API turn (Codex)."""
        request.reply = "text"
        return [
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{next(self._ids)}",
                "content": [{"type": "output_text", "text": REPLY_TEXT}],
            }
        ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                request = Request("GET", self.path, dict(self.headers.items()), None)
                request.reply = "404"
                api._record(request)
                self._send(404, b'{"type":"error","error":{"type":"not_found_error"}}')

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                request = Request("POST", self.path, dict(self.headers.items()), body)
                route = request.route
                if route.endswith("/messages/count_tokens"):
                    request.reply = "count"
                    api._record(request)
                    self._send(200, b'{"input_tokens": 12}')
                elif route.endswith("/messages"):
                    blocks, stop = api._messages_reply(request)
                    api._record(request)
                    self._messages(request, blocks, stop)
                elif route.endswith("/responses"):
                    failed = STATUS_DIRECTIVE.search(raw.decode("utf-8", "replace"))
                    if failed:
                        request.reply = failed.group(1)
                        api._record(request)
                        error = b'{"error":{"message":"scripted failure","type":"server_error"}}'
                        self._send(int(failed.group(1)), error)
                        return
                    items = api._responses_reply(request)
                    api._record(request)
                    self._responses(items)
                elif route.endswith("/chat/completions"):
                    text, calls = api._chat_reply(request)
                    api._record(request)
                    self._chat(request, text, calls)
                    request.answered = time.time()
                else:
                    request.reply = "404"
                    api._record(request)
                    self._send(404, b'{"type":"error","error":{"type":"not_found_error"}}')

            def _messages(self, request: Request, blocks: list[Json], stop: str) -> None:
                model = request.body.get("model", "claude-scripted")
                message_id = f"msg_{next(api._ids):06d}"
                usage = {"input_tokens": 12, "output_tokens": 5}
                if not request.body.get("stream"):
                    whole = {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": blocks,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": usage,
                    }
                    self._send(200, json.dumps(whole).encode())
                    return
                events: list[tuple[str, Json]] = [
                    (
                        "message_start",
                        {
                            "type": "message_start",
                            "message": {
                                "id": message_id,
                                "type": "message",
                                "role": "assistant",
                                "model": model,
                                "content": [],
                                "stop_reason": None,
                                "stop_sequence": None,
                                "usage": {"input_tokens": 12, "output_tokens": 1},
                            },
                        },
                    )
                ]
                for index, block in enumerate(blocks):
                    if block["type"] == "text":
                        start: Json = {"type": "text", "text": ""}
                        delta: Json = {"type": "text_delta", "text": block["text"]}
                    else:
                        start = {**block, "input": {}}
                        delta = {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(block["input"]),
                        }
                    events += [
                        (
                            "content_block_start",
                            {"type": "content_block_start", "index": index, "content_block": start},
                        ),
                        (
                            "content_block_delta",
                            {"type": "content_block_delta", "index": index, "delta": delta},
                        ),
                        ("content_block_stop", {"type": "content_block_stop", "index": index}),
                    ]
                events += [
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
                self._sse(events)

            def _responses(self, items: list[Json]) -> None:
                response_id = f"resp_{next(api._ids)}"
                events: list[tuple[str, Json]] = [
                    (
                        "response.created",
                        {"type": "response.created", "response": {"id": response_id}},
                    )
                ]
                for item in items:
                    events.append(
                        (
                            "response.output_item.done",
                            {"type": "response.output_item.done", "item": item},
                        )
                    )
                events.append(
                    (
                        "response.completed",
                        {
                            "type": "response.completed",
                            "response": {
                                "id": response_id,
                                "usage": {
                                    "input_tokens": 12,
                                    "input_tokens_details": None,
                                    "output_tokens": 5,
                                    "output_tokens_details": None,
                                    "total_tokens": 17,
                                },
                            },
                        },
                    )
                )
                self._sse(events)

            def _chat(self, request: Request, text: str, calls: list[Json]) -> None:
                """A chat completion: one JSON object, or SSE chunks ending in [DONE]."""
                model = request.body.get("model", "scripted-model")
                completion_id = f"chatcmpl-{next(api._ids)}"
                usage = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
                finish = "tool_calls" if calls else "stop"
                if not request.body.get("stream"):
                    message: Json = {"role": "assistant", "content": text or None}
                    if calls:
                        message["tool_calls"] = calls
                    whole = {
                        "id": completion_id,
                        "object": "chat.completion",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": usage,
                    }
                    self._send(200, json.dumps(whole).encode())
                    return
                deltas: list[tuple[Json, str | None]] = [
                    ({"role": "assistant", "content": ""}, None)
                ]
                if calls:
                    deltas += [
                        ({"tool_calls": [{"index": index, **call}]}, None)
                        for index, call in enumerate(calls)
                    ]
                else:
                    deltas.append(({"content": text}, None))
                deltas.append(({}, finish))
                chunks = []
                for delta, reason in deltas:
                    chunk: Json = {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
                    }
                    if reason:
                        chunk["usage"] = usage
                    chunks.append(f"data: {json.dumps(chunk)}\n\n")
                chunks.append("data: [DONE]\n\n")
                self._send(200, "".join(chunks).encode(), "text/event-stream")

            def _sse(self, events: list[tuple[str, Json]]) -> None:
                body = "".join(
                    f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events
                ).encode()
                self._send(200, body, "text/event-stream")

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
