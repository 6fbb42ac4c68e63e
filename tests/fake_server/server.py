"""`FakeModelServer`: a scripted fake LLM endpoint over real HTTP on 127.0.0.1.

Routes (with or without the `/v1` prefix, query strings ignored):
  POST /v1/responses              OpenAI Responses API        protocol "responses"
  POST /v1/chat/completions       OpenAI Chat Completions     protocol "chat"
  POST /v1/messages               Anthropic Messages          protocol "anthropic"
  POST /v1/messages/count_tokens  {"input_tokens": N}         (not recorded, consumes nothing)
  GET  /v1/models                 a one-model list valid for both SDKs (not recorded)
  `routes`                        extra endpoints given to the constructor (e.g. llama.cpp's
                                  GET /props; see tests/fake_server/local_servers.py)
The paths where local servers report their context window (GET /props, POST /api/show,
GET /api/v0/models) answer 404 quietly, as a server without them would. Anything else is a
404 recorded in `unexpected` only. `/api/v1/...` is served like `/v1/...` (OpenRouter's paths).

Each model request consumes one scripted reply (FIFO, whatever the protocol).
Streaming requests get chunked SSE; non-streaming ones get the final JSON object.
"""

from __future__ import annotations

import json
import math
import socket
import socketserver
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

from .cloud import bedrock_chunk, cloud_route, streams
from .protocols import RENDERERS, Ctx, context_length_body, error_body, sse_bytes
from .script import Reply, ScriptItem, estimate_tokens

_ROUTES = {"/responses": "responses", "/chat/completions": "chat", "/messages": "anthropic"}


@dataclass
class RecordedRequest:
    """One request as the server saw it. `body` is the parsed JSON (None if
    unparsable); `input_tokens` = ceil(len(raw body bytes) / 4); `overflowed` is
    True when `context_window` rejected it; `reply` is the Reply that answered it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    protocol: str
    raw: bytes = b""
    input_tokens: int = 0
    overflowed: bool = False
    reply: Optional[Reply] = None
    cloud: Optional[str] = None  # "azure", "bedrock" or "vertex" when a cloud endpoint's path was asked
    cloud_stream: bool = False

    @property
    def stream(self) -> bool:
        return self.cloud_stream or (isinstance(self.body, dict) and self.body.get("stream") is True)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def server_bind(self) -> None:  # skip HTTPServer's slow getfqdn()
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class FakeModelServer:
    """Scripted fake model server. See the package docstring for the API.

    `context_window`: when set, a request whose estimated input tokens exceed it
    gets that protocol's context-length error without consuming a reply.
    `fallback`: callable(RecordedRequest) -> Reply used when the queue is empty
    (the CLI's demo responder); without it such requests get HTTP 500 and are
    recorded in `unexpected`.
    `chat_reasoning_field`: delta field carrying chat reasoning
    ("reasoning_content" like DeepSeek/vLLM, or "reasoning" like Ollama/OpenRouter).
    `max_recorded`: keep only the last N `requests` (long CLI/benchmark runs).
    `token_scale`: the server's tokenizer counts this many times ceil(bytes / 4) (a local model's
    tokenizer often counts 2-3x a bytes/4 estimate).
    `routes`: {(METHOD, path): callable(RecordedRequest) -> (status, JSON payload)} for extra
    endpoints; they are not recorded in `requests` and consume no reply.
    `overflow_body`: callable(protocol, model, window, prompt_tokens) -> JSON body of the
    context-length error (default: each protocol's real error).
    """

    def __init__(
        self,
        context_window: Optional[int] = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        fallback: Optional[Callable[[RecordedRequest], ScriptItem]] = None,
        chat_reasoning_field: str = "reasoning_content",
        verbose: bool = False,
        max_recorded: Optional[int] = None,
        token_scale: float = 1.0,
        routes: Optional[dict[tuple[str, str], Callable[["RecordedRequest"], tuple[int, Any]]]] = None,
        overflow_body: Optional[Callable[[str, str, int, int], Any]] = None,
    ) -> None:
        self.context_window = context_window
        self.token_scale = token_scale
        self.routes = dict(routes or {})
        self.overflow_body = overflow_body or context_length_body
        self.route_hits: list[tuple[str, str]] = []  # (method, path) of every extra route answered
        self.fallback = fallback
        self.chat_reasoning_field = chat_reasoning_field
        self.verbose = verbose
        self.max_recorded = max_recorded
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[RecordedRequest] = []
        self.errors: list[str] = []  # exceptions raised while answering (e.g. in a scripted callable)
        self._host, self._port = host, port
        self._queue: list[ScriptItem] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._counters: dict[str, int] = {}
        self._conns: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd: Optional[_HTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # ------------------------------------------------------------ lifecycle
    def start(self) -> "FakeModelServer":
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer((self._host, self._port), _make_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections (streams in progress end abruptly)."""
        httpd, self._httpd = self._httpd, None
        self._stopping.set()
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeModelServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """ANTHROPIC_BASE_URL style: http://127.0.0.1:PORT"""
        return f"http://{self._host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """OPENAI_BASE_URL style: http://127.0.0.1:PORT/v1"""
        return self.base_url + "/v1"

    # ------------------------------------------------------------ scripting
    def script(self, *items: ScriptItem) -> "FakeModelServer":
        """Append replies (Reply, str, or callable(RecordedRequest) -> Reply) to the FIFO queue."""
        with self._lock:
            self._queue.extend(items)
        return self

    @property
    def remaining(self) -> int:
        """Number of scripted replies not consumed yet."""
        with self._lock:
            return len(self._queue)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        """Block until at least `n` requests were recorded (or timeout); returns success."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self.requests) >= n, timeout)

    def assert_done(self) -> None:
        """Fail if a request was unexpected, a scripted callable raised, or replies remain."""
        problems = []
        if self.unexpected:
            problems.append(
                "unexpected requests: " + ", ".join(f"{r.method} {r.path} ({r.protocol})" for r in self.unexpected)
            )
        if self.errors:
            problems.append("errors while answering: " + "; ".join(self.errors))
        if self.remaining:
            problems.append(f"{self.remaining} scripted replies not consumed")
        if problems:
            raise AssertionError("FakeModelServer: " + " | ".join(problems))

    # ------------------------------------------------------------ internals
    def _new_id(self, prefix: str) -> str:
        with self._lock:
            n = self._counters[prefix] = self._counters.get(prefix, 0) + 1
        return f"{prefix}_{n}"

    def _new_call_id(self, prefix: str) -> str:
        with self._lock:
            n = self._counters["<call>"] = self._counters.get("<call>", 0) + 1
        return f"{prefix}_{n}"

    def _record(self, rec: RecordedRequest, unexpected: bool = False, known: bool = True) -> None:
        with self._cond:
            if known:
                self.requests.append(rec)
                if self.max_recorded is not None and len(self.requests) > self.max_recorded:
                    del self.requests[: len(self.requests) - self.max_recorded]
            if unexpected:
                self.unexpected.append(rec)
            self._cond.notify_all()

    def _next_item(self) -> Optional[ScriptItem]:
        with self._lock:
            return self._queue.pop(0) if self._queue else None


def _make_handler(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeModelServer

    # -------------------------------------------------------------- plumbing
    def setup(self) -> None:
        super().setup()
        # Small writes go out at once: a stream's last chunk otherwise waits for the client's
        # delayed ACK (~40 ms), which timed the end of every Chat Completions run, not the agent.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.fake._lock:
            self.fake._conns.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        with self.fake._lock:
            self.fake._conns.discard(self.connection)

    def handle(self) -> None:
        try:
            super().handle()
        except (OSError, ValueError):  # client went away, socket shut down by stop()
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        if self.fake.verbose:
            super().log_message(format, *args)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status: int, payload: Any, headers: Optional[dict] = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)

    def _abort(self) -> None:
        """Close the socket without finishing the response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -------------------------------------------------------------- routes
    def _extra_route(self, raw: bytes) -> bool:
        """Answer a route given to the constructor, or a quiet 404 at a window probe's path."""
        path = self.path.split("?", 1)[0].rstrip("/")
        handler = self.fake.routes.get((self.command, path))
        if handler is None:
            if (self.command, path) in _QUIET_404:
                self._send_json(404, {"error": "not found"})
                return True
            return False
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.fake.route_hits.append((self.command, path))
        status, payload = handler(RecordedRequest(self.command, self.path, self._headers(), body, "route", raw))
        self._send_json(status, payload)
        return True

    def do_GET(self) -> None:
        if self._extra_route(b""):
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            model = {
                "id": "fake-model",
                "object": "model",
                "created": 0,
                "owned_by": "fake",
                "type": "model",
                "display_name": "Fake Model",
                "created_at": "2025-01-01T00:00:00Z",
            }
            return self._send_json(
                200,
                {
                    "object": "list",
                    "data": [model],
                    "has_more": False,
                    "first_id": "fake-model",
                    "last_id": "fake-model",
                },
            )
        self._unknown(b"")

    def do_POST(self) -> None:
        try:
            raw = self._read_body()
        except ValueError:  # bad Content-Length / chunk size
            self.close_connection = True
            return self._send_json(
                400,
                {
                    "error": {
                        "message": "fake server: unreadable body",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        try:
            if not self._extra_route(raw):
                self._dispatch(raw)
        except OSError:  # client went away mid-answer, or stop() closed the socket
            self.close_connection = True
        except Exception as exc:  # never let a handler thread die silently
            self.fake.errors.append(f"{type(exc).__name__}: {exc}")
            try:
                self._send_json(
                    500,
                    {
                        "error": {
                            "message": f"fake server error: {exc}",
                            "type": "server_error",
                            "param": None,
                            "code": None,
                        }
                    },
                    {"x-should-retry": "false"},
                )
            except OSError:
                self.close_connection = True

    def _unknown(self, raw: bytes) -> None:
        rec = RecordedRequest(self.command, self.path, self._headers(), None, "unknown", raw)
        self.fake._record(rec, unexpected=True, known=False)
        self._send_json(
            404,
            {
                "error": {
                    "message": f"fake server: no route {self.command} {self.path}",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "not_found",
                }
            },
        )

    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _dispatch(self, raw: bytes) -> None:
        fake = self.fake
        path = self.path.split("?", 1)[0].rstrip("/")
        path = path[4:] if path.startswith("/api/v1/") else path
        bare = path[3:] if path.startswith("/v1/") else path
        if bare == "/messages/count_tokens":
            return self._send_json(200, {"input_tokens": estimate_tokens(len(raw))})
        api, cloud, path_model = cloud_route(path)
        protocol = _ROUTES.get(api or bare)
        if protocol is None:
            return self._unknown(raw)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = RecordedRequest(
            self.command,
            self.path,
            self._headers(),
            body,
            protocol,
            raw,
            input_tokens=math.ceil(fake.token_scale * estimate_tokens(len(raw))),
            cloud=cloud,
            cloud_stream=cloud is not None and streams(path, body),
        )
        model = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else "fake-model"
        model = path_model or model
        rid = fake._new_id("req")
        id_header = {"request-id" if protocol == "anthropic" else "x-request-id": rid}

        if not isinstance(body, dict):
            fake._record(rec, unexpected=True)
            return self._send_json(
                400,
                error_body(protocol, 400, model, "fake server: body is not a JSON object", request_id=rid),
                id_header,
            )
        if fake.context_window is not None and rec.input_tokens > fake.context_window:
            rec.overflowed = True
            fake._record(rec)
            return self._send_json(
                400, fake.overflow_body(protocol, model, fake.context_window, rec.input_tokens), id_header
            )

        item = fake._next_item()
        if item is None and fake.fallback is not None:
            item = fake.fallback
        if item is None:
            fake._record(rec, unexpected=True)
            msg = "fake server: no scripted reply left for this request"
            return self._send_json(
                500, error_body(protocol, 500, model, msg, request_id=rid), {**id_header, "x-should-retry": "false"}
            )
        try:
            reply = item(rec) if callable(item) else item
            reply = Reply(text=reply) if isinstance(reply, str) else reply
            if not isinstance(reply, Reply):
                raise TypeError(f"scripted callable returned {type(reply).__name__}, not Reply")
        except Exception as exc:
            fake._record(rec)
            raise RuntimeError(f"scripted callable failed: {exc!r}") from exc
        rec.reply = reply
        fake._record(rec)
        self._answer(protocol, rec, reply, model, rid, id_header)

    def _answer(self, protocol: str, rec: RecordedRequest, reply: Reply, model: str, rid: str, id_header: dict) -> None:
        fake = self.fake
        if reply.kind == "http_error":
            headers = dict(id_header)
            if reply.retry_after is not None:
                headers["retry-after"] = reply.retry_after
            body = error_body(
                protocol, reply.status, model, reply.message, reply.error_type, reply.code, request_id=rid
            )
            return self._send_json(reply.status, body, headers)
        if reply.kind == "context_length" and not (reply.in_stream and protocol == "responses" and rec.stream):
            body = context_length_body(protocol, model, reply.max_tokens, reply.prompt_tokens)
            return self._send_json(400, body, id_header)

        ctx = Ctx(rec.body, rec.input_tokens, fake._new_id, fake._new_call_id, fake.chat_reasoning_field)
        events, final = RENDERERS[protocol](reply, ctx)
        if not rec.stream:
            if reply.kind == "cut":
                return self._abort()
            if reply.kind == "stream_error":
                return self._send_json(500, error_body(protocol, 500, model, reply.message, request_id=rid), id_header)
            return self._send_json(200, final, id_header)

        bedrock = rec.cloud == "bedrock"
        self.send_response(200)
        self.send_header(
            "Content-Type", "application/vnd.amazon.eventstream" if bedrock else "text/event-stream; charset=utf-8"
        )
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in id_header.items():
            self.send_header(k, v)
        self.end_headers()
        if reply.kind == "empty":  # a 200 stream that ends cleanly with nothing in it
            events = []
        if reply.kind == "raw":  # a stream exactly as scripted
            events = list(reply.events)
        limit = reply.after_events if reply.kind == "cut" or (reply.kind == "raw" and reply.after_events) else None
        started = time.monotonic()
        for i, event in enumerate(events):
            if limit is not None and i >= limit:
                return self._abort()
            # Each event is due `delay` after the one before, counted from the first, as a model
            # keeps its pace: waits of `delay` each fell behind whenever this thread waited for
            # the interpreter behind a busy client in the same process (bench/tui_stream.py).
            if i and reply.delay and fake._stopping.wait(max(0.0, started + i * reply.delay - time.monotonic())):
                return self._abort()
            if fake._stopping.is_set():
                return self._abort()
            data = bedrock_chunk(event[1]) if bedrock else sse_bytes(event)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        if limit is not None:
            return self._abort()
        self.wfile.write(b"0\r\n\r\n")


_QUIET_404 = {("GET", "/props"), ("POST", "/api/show"), ("GET", "/api/v0/models")}
