"""The openai/ backend against llama-cpp-python's own OpenAI-compatible server.

The server runs the real embedded model (qwen2.5-coder 0.5B) on 127.0.0.1 and wants an
API key; the header tests and a key refused mid-run use a tiny stdlib server of their
own that records request headers.
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
from codetrial.errors import BackendRefused, BackendUnavailable, ConfigError, PromptTooLong
from codetrial.models import create_backend
from codetrial.models.openai import OpenAIBackend
from codetrial.models.weights import QWEN_CODER_05B
from codetrial.records import GenerationOptions, Message, Outcome
from codetrial.store import RunStore
from tests.conftest import refused_and_saved

pytestmark = pytest.mark.embedded

CODETRIAL = Path(sys.executable).with_name("codetrial")
ALIAS = "qwen-coder"
API_KEY = "sk-llama-server"
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
    """`python -m llama_cpp.server` on the embedded GGUF, wanting API_KEY; yields its
    /v1 base URL."""
    gguf = QWEN_CODER_05B.prepare()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    argv = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--model_alias",
        ALIAS,
        "--api_key",
        API_KEY,
    ]
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
            answer = httpx.get(f"{base}/models", timeout=2, headers=_bearer(API_KEY))
            if answer.status_code == 200:
                return
        time.sleep(0.2)
    pytest.fail(f"llama_cpp.server not up after {STARTUP_S:.0f} s:\n{_tail(log_path)}")


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture
def dead_url() -> str:
    return f"http://127.0.0.1:{_free_port()}/v1"


def _endpoints(url: str, api_key: str | None = API_KEY) -> Endpoints:
    return Endpoints(openai_url=url, openai_api_key=api_key, request_timeout_s=120)


def test_generate_with_the_embedded_model(llama_url: str) -> None:
    generation = OpenAIBackend(ALIAS, _endpoints(llama_url)).generate(MESSAGES, OPTIONS)
    assert generation.text.strip()
    assert generation.completion_tokens is not None
    assert 0 < generation.completion_tokens <= 48
    assert generation.prompt_tokens is not None and generation.prompt_tokens > 0
    assert generation.finish_reason in {"stop", "length"}


def test_a_prompt_too_long_for_the_context_window_is_prompt_too_long(
    llama_url: str, wire: _RecordingServer
) -> None:
    """llama-cpp-python's server refuses it as OpenAI does (the numbers in the message
    only), llama.cpp's server with them as fields: both are PromptTooLong, asked once."""
    long = [Message("user", "Write add(a, b). " + "Really. " * 2100)]
    with pytest.raises(PromptTooLong, match="context window") as raised:
        OpenAIBackend(ALIAS, _endpoints(llama_url)).generate(long, OPTIONS)
    assert raised.value.context == 2048
    assert raised.value.prompt_tokens is not None and raised.value.prompt_tokens > 2048
    wire.n_ctx = 64
    with pytest.raises(PromptTooLong) as raised:
        create_backend("openai/wire-model", _endpoints(_wire_url(wire))).generate(long, OPTIONS)
    assert (raised.value.prompt_tokens, raised.value.context) == (2103, 64)
    assert [path for _, path, _, _ in wire.seen].count("/v1/chat/completions") == 1


def test_conditions_have_model_and_url(llama_url: str) -> None:
    backend = create_backend(f"openai/{ALIAS}", _endpoints(llama_url))
    assert backend.name == f"openai/{ALIAS}"
    conditions = backend.conditions()
    assert conditions["model"] == ALIAS
    assert conditions["base_url"] == llama_url
    assert API_KEY not in json.dumps(conditions)


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


@pytest.mark.parametrize("key", ["sk-wrong", None])
def test_a_refused_api_key_says_what_to_fix(llama_url: str, key: str | None) -> None:
    with pytest.raises(BackendRefused) as caught:
        OpenAIBackend(ALIAS, _endpoints(llama_url, key))
    message = str(caught.value)
    assert f"{llama_url}/models refused the request: HTTP 401 Unauthorized" in message
    assert "Invalid API key" in message  # the server's own words
    assert "pass the right one with --api-key or set $OPENAI_API_KEY" in message
    assert isinstance(caught.value, BackendUnavailable)  # so a run stops, resumably


def test_a_url_without_v1_says_what_to_fix(llama_url: str) -> None:
    root = llama_url.removesuffix("/v1")
    with pytest.raises(BackendRefused) as caught:
        OpenAIBackend(ALIAS, _endpoints(root))
    message = str(caught.value)
    assert f"{root}/models refused the request: HTTP 404 Not Found" in message
    assert "--base-url" in message and "usually ends in /v1" in message


def test_cli_run_with_a_wrong_api_key(llama_url: str, tmp_path: Path) -> None:
    result = _cli(
        "run",
        "--model",
        f"openai/{ALIAS}",
        "--openai-url",
        llama_url,
        "--api-key",
        "sk-wrong",
        "--task",
        "palindrome",
        "--runs-dir",
        str(tmp_path),
    )
    output = result.stdout + result.stderr
    assert result.returncode == BackendRefused.exit_code, output
    stderr = " ".join(result.stderr.split())
    assert f"{llama_url}/models refused the request: HTTP 401" in stderr
    assert "--api-key" in stderr
    assert "Traceback" not in output
    assert list(tmp_path.iterdir()) == []  # refused before the run started


# -- the API key, checked against a small server that records headers ------------------


class _OpenAIWire(BaseHTTPRequestHandler):
    """`GET /v1/models` and `POST /v1/chat/completions` in the OpenAI wire format. When
    the server has an `api_key`, other keys get OpenAI's 401, and so does that key once
    `revoke_after` completions are answered. When it has an `n_ctx`, a prompt of that
    many words or more gets the HTTP 400 llama.cpp's server (llama-server) sends."""

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

    def _refused(self) -> bool:
        server = self.server
        revoked = server.revoke_after is not None and server.completions >= server.revoke_after
        if server.api_key is None or (
            self.headers.get("Authorization") == f"Bearer {server.api_key}" and not revoked
        ):
            return False
        message = "Incorrect API key provided."
        self._send(
            401,
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            },
        )
        return True

    def do_GET(self) -> None:
        self._record()
        if self._refused():
            return
        if self.path != "/v1/models":
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        model = {"id": "wire-model", "object": "model", "created": 1700000000, "owned_by": "me"}
        self._send(200, {"object": "list", "data": [model]})

    def do_POST(self) -> None:
        body = self._record()
        if self._refused():
            return
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        words = sum(len(m["content"].split()) for m in body["messages"])
        if self.server.n_ctx is not None and words >= self.server.n_ctx:
            message = (
                f"request ({words} tokens) exceeds the available context size "
                f"({self.server.n_ctx} tokens), try increasing it"
            )
            error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
            sizes = {"n_prompt_tokens": words, "n_ctx": self.server.n_ctx}
            self._send(400, {"error": error | sizes})
            return
        self.server.completions += 1
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
        self.api_key: str | None = None
        self.revoke_after: int | None = None
        self.n_ctx: int | None = None
        self.completions = 0
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


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OLLAMA_", "OPENAI_"))}
    env["COLUMNS"] = "200"
    return subprocess.run(
        [str(CODETRIAL), *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_cli_run_end_to_end(llama_url: str, tmp_path: Path) -> None:
    result = _cli(
        "run",
        "--model",
        f"openai/{ALIAS}",
        "--openai-url",
        llama_url,
        "--api-key",
        API_KEY,
        "--task",
        "palindrome",
        "--max-tokens",
        "256",
        "--runs-dir",
        str(tmp_path),
    )
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
    """The same weights judged over HTTP and in-process give the same P(yes), up to
    float rounding: the server evaluates the prompt with logits for every position (its
    logprobs need them), a differently shaped output matmul than the in-process judge's,
    which moves P(yes) by about 0.02 in llama.cpp's AVX2 build."""
    messages = [
        Message("system", "Answer with one word: yes or no."),
        Message("user", "Is 7 a prime number? Answer yes or no."),
    ]
    served = OpenAIBackend(ALIAS, _endpoints(llama_url)).yes_probability(messages, OPTIONS)
    embedded = create_backend("embedded", Endpoints())
    try:
        local = embedded.yes_probability(messages, OPTIONS)
    finally:
        embedded.close()
    assert 0.0 < served < 1.0
    assert served == pytest.approx(local, abs=0.05)


def test_cli_run_stops_when_the_key_is_refused_mid_run(
    wire: _RecordingServer, tmp_path: Path
) -> None:
    """The key serves the model check and one completion, then is refused (revoked, say):
    the run stops, keeps the finished attempt, and resumes with a new key."""
    wire.api_key, wire.revoke_after = "sk-old", 1
    url = _wire_url(wire)
    result = _cli(
        "run",
        "--model",
        "openai/wire-model",
        "--openai-url",
        url,
        "--api-key",
        "sk-old",
        "--task",
        "palindrome",
        "--task",
        "two_sum",
        "--repair-attempts",
        "0",
        "--runs-dir",
        str(tmp_path),
    )
    refused = f"{url}/chat/completions refused the request: HTTP 401 Unauthorized"
    run_dir, stderr = refused_and_saved(result, tmp_path, refused)
    assert "Incorrect API key provided." in stderr
    assert "pass the right one with --api-key or set $OPENAI_API_KEY" in stderr
    assert len([seen for seen in wire.seen if seen[0] == "POST"]) == 2  # a 401 is not retried
    store = RunStore.open(run_dir)
    (finished,) = store.attempts()
    store.close()
    assert (finished.task_id, finished.outcome) == ("palindrome", Outcome.REJECTED)

    wire.api_key, wire.revoke_after = "sk-new", None
    result = _cli("run", "--resume", str(run_dir), "--openai-url", url, "--api-key", "sk-new")
    assert result.returncode == 0, result.stdout + result.stderr
    store = RunStore.open(run_dir)
    assert [a.task_id for a in store.attempts()] == ["palindrome", "two_sum"]
    store.close()
    assert len([seen for seen in wire.seen if seen[0] == "POST"]) == 3  # palindrome not redone
