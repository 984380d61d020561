"""A small real HTTP server that speaks Ollama's native API wire format.

It listens on 127.0.0.1 (port chosen by the OS), answers like `ollama serve` does for
the endpoints the backend uses, and records every request so tests can assert on the
exact wire fields:

- `GET /api/version` -> `{"version": "0.12.3"}`
- `GET /api/tags` -> `{"models": [{name, model, modified_at, size, digest, details}]}`
- `POST /api/chat` -> one JSON object when `"stream": false`; NDJSON chunks
  (`application/x-ndjson`, chunked transfer) when `stream` is true or missing, as
  Ollama streams by default; an unknown model gets HTTP 404
  `{"error": "model \\"x\\" not found, try pulling it first"}`.

The chat reply is `reply(request_body)`. Token counts are whitespace-separated words:
`prompt_eval_count` over the request's message contents, `eval_count` over the reply.
`fail_next(n)` makes the next n requests to a path answer HTTP 500 first. When
`wire.top_logprobs` is set (a newer Ollama, 0.12.11+), a chat request with
`"logprobs": true` gets a top-level `logprobs` list: one entry per reply word, the
first carrying `top_logprobs` from those (token, logprob) pairs; when it is None
(older servers) no `logprobs` is sent.

Use it as a context manager (or call start() and stop()); stop() closes kept-alive
connections and joins every handler thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], str]

DEFAULT_VERSION = "0.12.3"
DEFAULT_REPLY = "Hello from the Ollama wire server."


def tag_entry(
    name: str,
    *,
    family: str = "qwen3",
    parameter_size: str = "8.2B",
    quantization_level: str = "Q4_K_M",
    size: int = 5_225_388_164,
) -> dict[str, Any]:
    """One entry of /api/tags, in the documented shape; the digest is derived from the name."""
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-10-01T09:30:12.123456789Z",
        "size": size,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": family,
            "families": [family],
            "parameter_size": parameter_size,
            "quantization_level": quantization_level,
        },
    }


def word_count(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class Recorded:
    """One request as received: `body` is the parsed JSON body, or None."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def _full_name(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ollama-wire"
    timeout = 30  # an idle kept-alive connection ends by itself at the latest after this
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- plumbing ------------------------------------------------------------------

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_text(self, status: int, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_ndjson(self, lines: list[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for line in lines:
            data = json.dumps(line).encode() + b"\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _record(self, raw: bytes) -> Recorded | None:
        """Record the request; answer 400 and return None when the body is not JSON."""
        body: Any = None
        invalid = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                invalid = True
        record = Recorded(self.command, self.path, dict(self.headers.items()), body)
        self.server.wire.record(record)
        if invalid:
            self._send_json(400, {"error": "invalid character in request body"})
            return None
        return record

    # -- routes --------------------------------------------------------------------

    def do_GET(self) -> None:
        record = self._record(b"")
        if record is None or self._injected_failure():
            return
        wire = self.server.wire
        if self.path in ("/", ""):
            self._send_text(200, "Ollama is running")
        elif self.path == "/api/version":
            self._send_json(200, {"version": wire.version})
        elif self.path == "/api/tags":
            self._send_json(200, {"models": wire.models})
        else:
            self._send_text(404, "404 page not found")

    def do_POST(self) -> None:
        record = self._record(self._read_body())
        if record is None or self._injected_failure():
            return
        if self.path == "/api/chat":
            self._chat(record.body)
        else:
            self._send_text(404, "404 page not found")

    def _injected_failure(self) -> bool:
        if not self.server.wire.take_failure(self.path):
            return False
        self._send_json(500, {"error": "an error was encountered while running the model"})
        return True

    def _chat(self, body: Any) -> None:
        wire = self.server.wire
        if not isinstance(body, dict) or not body.get("model"):
            self._send_json(400, {"error": "model is required"})
            return
        name = str(body["model"])
        known = {_full_name(str(m["name"])) for m in wire.models}
        if _full_name(name) not in known:
            self._send_json(404, {"error": f'model "{name}" not found, try pulling it first'})
            return
        content = wire.reply(body)
        messages = body.get("messages") or []
        prompt_tokens = sum(word_count(str(m.get("content", ""))) for m in messages)
        eval_tokens = word_count(content)
        final = {
            "model": name,
            "created_at": _now(),
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": "stop",
            "total_duration": 1_000_000 + 20_000_000 * (prompt_tokens + eval_tokens),
            "load_duration": 1_000_000,
            "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": 20_000_000 * prompt_tokens,
            "eval_count": eval_tokens,
            "eval_duration": 20_000_000 * eval_tokens,
        }
        if body.get("think") is True:
            final["message"]["thinking"] = "Thinking about it."
        if body.get("logprobs") is True and wire.top_logprobs is not None:
            wanted = int(body.get("top_logprobs") or 0)
            top = [
                {"token": token, "logprob": logprob, "bytes": list(token.encode())}
                for token, logprob in wire.top_logprobs[:wanted]
            ]
            final["logprobs"] = [
                {
                    "token": piece,
                    "logprob": -0.25,
                    "bytes": list(piece.encode()),
                    "top_logprobs": top if index == 0 else [],
                }
                for index, piece in enumerate(re.findall(r"\s*\S+", content) or [content])
            ]
        if body.get("stream", True) is False:
            self._send_json(200, final)
            return
        pieces = re.findall(r"\s*\S+", content) or [content]
        chunks = [
            {
                "model": name,
                "created_at": _now(),
                "message": {"role": "assistant", "content": piece},
                "done": False,
            }
            for piece in pieces
        ]
        chunks.append({**final, "message": {"role": "assistant", "content": ""}})
        self._send_ndjson(chunks)


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True  # server_close() joins every handler thread

    def __init__(self, wire: OllamaWire) -> None:
        self.wire = wire
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """End kept-alive connections so their handler threads finish now."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class OllamaWire:
    """The server's state and lifecycle; see the module docstring."""

    def __init__(
        self,
        models: list[dict[str, Any]] | None = None,
        version: str = DEFAULT_VERSION,
        reply: Reply | None = None,
    ) -> None:
        self.models = [tag_entry("qwen3:8b")] if models is None else models
        self.version = version
        self.reply: Reply = reply or (lambda body: DEFAULT_REPLY)
        self.top_logprobs: list[tuple[str, float]] | None = None
        self.requests: list[Recorded] = []
        self._failures: dict[str, int] = {}
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- state the handler uses ----------------------------------------------------

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def take_failure(self, path: str) -> bool:
        with self._lock:
            left = self._failures.get(path, 0)
            if left <= 0:
                return False
            self._failures[path] = left - 1
            return True

    # -- what tests use --------------------------------------------------------------

    def fail_next(self, times: int, path: str = "/api/chat") -> None:
        """Answer the next `times` requests to `path` with HTTP 500."""
        with self._lock:
            self._failures[path] = times

    def digest(self, name: str) -> str:
        return next(str(m["digest"]) for m in self.models if m["name"] == name)

    @property
    def bodies(self) -> list[Any]:
        """Every request body received, in order (requests without a body are left out)."""
        with self._lock:
            return [r.body for r in self.requests if r.body is not None]

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.requests if r.path == "/api/chat"]

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> OllamaWire:
        if self._httpd is not None:
            raise RuntimeError("already started")
        self._httpd = _Server(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="ollama-wire",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        httpd.shutdown()
        httpd.drop_connections()
        httpd.server_close()
        thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> OllamaWire:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
