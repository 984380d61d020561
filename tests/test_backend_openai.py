"""The openai/ backend against llama-cpp-python's own OpenAI-compatible server.

The server runs the real embedded model (qwen2.5-coder 0.5B) on 127.0.0.1; the API-key
test uses a tiny stdlib server of its own that records request headers.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from codetrial.config import Endpoints, endpoints_from_env
from codetrial.errors import BackendUnavailable, ConfigError
from codetrial.models import create_backend
from codetrial.models.openai import OpenAIBackend
from codetrial.models.weights import QWEN_CODER_05B
from codetrial.records import GenerationOptions, Message

pytestmark = pytest.mark.embedded

CODETRIAL = Path(sys.executable).with_name("codetrial")
ALIAS = "qwen-coder"
STARTUP_S = 120.0
MESSAGES = [
    Message("system", "You are a helpful Python programmer."),
    Message("user", "Write a Python function add(a, b) that returns a + b."),
]
OPTIONS = GenerationOptions(temperature=0.0, seed=42, max_tokens=48, num_ctx=2048, think=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m llama_cpp.server` on the embedded GGUF; yields its /v1 base URL."""
    gguf = QWEN_CODER_05B.prepare()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    argv = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--model_alias", ALIAS,
    ]  # fmt: skip
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}/v1"
            _wait_until_up(proc, base, log_path)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


def _wait_until_up(proc: subprocess.Popen[bytes], base: str, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{_tail(log_path)}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    pytest.fail(f"llama_cpp.server not up after {STARTUP_S:.0f} s:\n{_tail(log_path)}")


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture
def dead_url() -> str:
    return f"http://127.0.0.1:{_free_port()}/v1"


def _endpoints(url: str, api_key: str | None = None) -> Endpoints:
    return Endpoints(openai_url=url, openai_api_key=api_key, request_timeout_s=120)


def test_generate_with_the_embedded_model(llama_url: str) -> None:
    generation = OpenAIBackend(ALIAS, _endpoints(llama_url)).generate(MESSAGES, OPTIONS)
    assert generation.text.strip()
    assert generation.completion_tokens is not None
    assert 0 < generation.completion_tokens <= 48
    assert generation.prompt_tokens is not None and generation.prompt_tokens > 0
    assert generation.finish_reason in {"stop", "length"}


def test_conditions_have_model_and_url(llama_url: str) -> None:
    backend = create_backend(f"openai/{ALIAS}", _endpoints(llama_url, api_key="sk-secret"))
    assert backend.name == f"openai/{ALIAS}"
    conditions = backend.conditions()
    assert conditions["model"] == ALIAS
    assert conditions["base_url"] == llama_url
    assert "sk-secret" not in json.dumps(conditions)


def test_unknown_model_lists_what_is_served(llama_url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIBackend("gpt-4o", _endpoints(llama_url))
    assert "'gpt-4o'" in str(caught.value)
    assert ALIAS in str(caught.value)
    assert llama_url in str(caught.value)


def test_server_down_is_backend_unavailable(dead_url: str) -> None:
    with pytest.raises(BackendUnavailable) as caught:
        OpenAIBackend(ALIAS, _endpoints(dead_url))
    assert dead_url in str(caught.value)
    assert "llama_cpp.server" in str(caught.value)


# -- the API key, checked against a small server that records headers ------------------


class _OpenAIWire(BaseHTTPRequestHandler):
    """`GET /v1/models` and `POST /v1/chat/completions` in the OpenAI wire format."""

    server: _RecordingServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.server.seen.append((self.command, self.path, dict(self.headers.items()), body))
        return body

    def do_GET(self) -> None:
        self._record()
        if self.path != "/v1/models":
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        model = {"id": "wire-model", "object": "model", "created": 1700000000, "owned_by": "me"}
        self._send(200, {"object": "list", "data": [model]})

    def do_POST(self) -> None:
        body = self._record()
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        self._send(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1700000000,
                "model": body["model"],
                "system_fingerprint": "fp_wire",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "def add(a, b): ..."},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
            },
        )


class _RecordingServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str], Any]] = []
        super().__init__(("127.0.0.1", 0), _OpenAIWire)


@pytest.fixture
def wire() -> Iterator[_RecordingServer]:
    server = _RecordingServer()  # HTTP/1.0 handler: every connection closes after its answer
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _wire_url(server: _RecordingServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_api_key_is_sent_as_bearer_token(wire: _RecordingServer) -> None:
    backend = create_backend("openai/wire-model", _endpoints(_wire_url(wire), "sk-test-123"))
    generation = backend.generate(MESSAGES, OPTIONS)

    assert [(method, path) for method, path, _, _ in wire.seen] == [
        ("GET", "/v1/models"),
        ("POST", "/v1/chat/completions"),
    ]
    assert all(
        headers.get("Authorization") == "Bearer sk-test-123" for _, _, headers, _ in wire.seen
    )
    assert wire.seen[1][3] == {
        "model": "wire-model",
        "messages": [{"role": m.role, "content": m.content} for m in MESSAGES],
        "temperature": 0.0,
        "seed": 42,
        "max_tokens": 48,
    }
    assert (generation.text, generation.prompt_tokens, generation.completion_tokens) == (
        "def add(a, b): ...",
        11,
        7,
    )
    assert backend.conditions()["system_fingerprint"] == "fp_wire"
    assert "sk-test-123" not in json.dumps(backend.conditions())


def test_api_key_from_the_environment_and_none_without_it(
    wire: _RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", _wire_url(wire))
    create_backend("openai/wire-model", endpoints_from_env())
    assert "Authorization" not in wire.seen[-1][2]

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    create_backend("openai/wire-model", endpoints_from_env())
    assert wire.seen[-1][2]["Authorization"] == "Bearer sk-from-env"


def test_cli_run_end_to_end(llama_url: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OLLAMA_", "OPENAI_"))}
    env["COLUMNS"] = "200"
    result = subprocess.run(
        [
            str(CODETRIAL), "run", "--model", f"openai/{ALIAS}", "--openai-url", llama_url,
            "--task", "palindrome", "--max-tokens", "256", "--runs-dir", str(tmp_path),
        ],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Traceback" not in output
    assert "Results" in result.stdout
    assert f"openai/{ALIAS}" in result.stdout
    assert "palindrome" in result.stdout
    manifests = list(tmp_path.glob("*/manifest.json"))
    assert len(manifests) == 1
    conditions = json.loads(manifests[0].read_text())["backends"][f"openai/{ALIAS}"]
    assert conditions["model"] == ALIAS and conditions["base_url"] == llama_url


def test_judge_reads_the_first_token_s_top_logprobs(llama_url: str) -> None:
    """The same weights judged over HTTP and in-process give the same P(yes)."""
    messages = [Message("system", "Answer with one word: yes or no."),
                Message("user", "Is 7 a prime number? Answer yes or no.")]  # fmt: skip
    served = OpenAIBackend(ALIAS, _endpoints(llama_url)).yes_probability(messages, OPTIONS)
    embedded = create_backend("embedded", Endpoints())
    try:
        local = embedded.yes_probability(messages, OPTIONS)
    finally:
        embedded.close()
    assert 0.0 < served < 1.0
    assert served == pytest.approx(local, abs=0.02)
