"""The ollama/ backend against a real local HTTP server speaking Ollama's wire format."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from codetrial.config import Endpoints, endpoints_from_env
from codetrial.errors import BackendError, BackendRefused, BackendUnavailable, ConfigError
from codetrial.models import create_backend
from codetrial.models.http import RETRIES
from codetrial.models.ollama import OllamaBackend
from codetrial.records import GenerationOptions, Message, Outcome
from codetrial.store import RunStore
from codetrial.tasks import Task
from tests.conftest import refused_and_saved
from tests.servers.ollama_wire import (
    DEFAULT_REPLY,
    OllamaWire,
    Reply,
    tag_entry,
    word_count,
)

CODETRIAL = Path(sys.executable).with_name("codetrial")
REFERENCE = (
    Path(__file__).parents[1] / "src/codetrial/tasks/suites/contracts10/palindrome/reference.py"
).read_text()
OPTIONS = GenerationOptions(temperature=0.7, seed=1234, max_tokens=321, num_ctx=8192, think=False)
MESSAGES = [
    Message("system", "You write Python."),
    Message("user", "Write is_palindrome(text) for me, please."),
]


@pytest.fixture
def wire() -> Iterator[OllamaWire]:
    with OllamaWire(models=[tag_entry("qwen3:8b"), tag_entry("llama3.2:latest")]) as server:
        yield server


@pytest.fixture
def dead_url() -> str:
    """A loopback URL where nothing listens: bind a free port, then close it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _backend(url: str, tag: str = "qwen3:8b") -> OllamaBackend:
    return OllamaBackend(tag, Endpoints(ollama_url=url, request_timeout_s=10))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OLLAMA_", "OPENAI_"))}
    env["COLUMNS"] = "200"
    return subprocess.run(
        [str(CODETRIAL), *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_conditions_record_tag_digest_server_version_url_and_size(wire: OllamaWire) -> None:
    backend = create_backend("ollama/qwen3:8b", Endpoints(ollama_url=wire.url))
    assert backend.name == "ollama/qwen3:8b"
    assert backend.conditions() == {
        "tag": "qwen3:8b",
        "digest": wire.digest("qwen3:8b"),
        "server": "ollama 0.12.3",
        "base_url": wire.url,
        "parameters": "8.2B",
    }
    assert len(wire.digest("qwen3:8b")) == 64
    assert [(r.method, r.path) for r in wire.requests] == [
        ("GET", "/api/version"),
        ("GET", "/api/tags"),
    ]


def test_a_tag_without_version_means_latest(wire: OllamaWire) -> None:
    backend = _backend(wire.url, "llama3.2")
    assert backend.conditions()["digest"] == wire.digest("llama3.2:latest")
    backend.generate(MESSAGES, OPTIONS)
    assert wire.chat_bodies[-1]["model"] == "llama3.2"


def test_generate_sends_the_documented_fields(wire: OllamaWire) -> None:
    generation = _backend(wire.url).generate(MESSAGES, OPTIONS)

    assert len(wire.chat_bodies) == 1
    assert wire.chat_bodies[0] == {
        "model": "qwen3:8b",
        "messages": [
            {"role": "system", "content": "You write Python."},
            {"role": "user", "content": "Write is_palindrome(text) for me, please."},
        ],
        "stream": False,
        "think": False,
        "options": {"temperature": 0.7, "seed": 1234, "num_ctx": 8192, "num_predict": 321},
    }
    assert generation.text == DEFAULT_REPLY
    assert generation.prompt_tokens == sum(word_count(m.content) for m in MESSAGES)
    assert generation.completion_tokens == word_count(DEFAULT_REPLY)
    assert generation.finish_reason == "stop"
    assert generation.duration_s >= 0


def test_think_is_sent_as_asked(wire: OllamaWire) -> None:
    options = GenerationOptions(temperature=0.0, seed=42, max_tokens=64, num_ctx=4096, think=True)
    generation = _backend(wire.url).generate(MESSAGES, options)
    assert wire.chat_bodies[0]["think"] is True
    assert wire.chat_bodies[0]["stream"] is False
    assert generation.text == DEFAULT_REPLY  # the thinking field is not the answer


def test_the_reply_comes_from_the_server(wire: OllamaWire) -> None:
    wire.reply = lambda body: f"echo: {body['messages'][-1]['content']}"
    generation = _backend(wire.url).generate([Message("user", "ping pong")], OPTIONS)
    assert generation.text == "echo: ping pong"
    assert (generation.prompt_tokens, generation.completion_tokens) == (2, 3)


def test_the_wire_server_streams_ndjson_unless_stream_is_false(wire: OllamaWire) -> None:
    """The server is faithful: like Ollama it streams by default, so `stream: false` matters."""
    body = {"model": "qwen3:8b", "messages": [{"role": "user", "content": "hi"}]}
    response = httpx.post(f"{wire.url}/api/chat", json=body, timeout=10)
    assert response.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert len(lines) > 1
    assert not any(line["done"] for line in lines[:-1]) and lines[-1]["done"] is True
    assert "".join(line["message"]["content"] for line in lines) == DEFAULT_REPLY
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_unknown_tag_is_a_config_error_naming_the_tag(wire: OllamaWire) -> None:
    with pytest.raises(ConfigError) as caught:
        _backend(wire.url, "mistral:7b")
    message = str(caught.value)
    assert "'mistral:7b'" in message
    assert "ollama pull mistral:7b" in message
    assert "llama3.2:latest, qwen3:8b" in message
    assert wire.url in message
    assert wire.chat_bodies == []


def test_chat_with_a_model_the_server_lost_is_refused(wire: OllamaWire) -> None:
    backend = _backend(wire.url)
    wire.models = [tag_entry("llama3.2:latest")]  # e.g. `ollama rm qwen3:8b` mid-run
    with pytest.raises(BackendRefused) as caught:
        backend.generate(MESSAGES, OPTIONS)
    message = str(caught.value)
    assert f"{wire.url}/api/chat refused the request: HTTP 404 Not Found" in message
    assert 'model \\"qwen3:8b\\" not found, try pulling it first' in message
    assert "check the model name given to --model (an Ollama model must be pulled)" in message
    assert len(wire.chat_bodies) == 1  # a 404 is not retried


def test_a_url_with_a_wrong_path_is_refused_at_start(wire: OllamaWire) -> None:
    with pytest.raises(BackendRefused) as caught:
        _backend(f"{wire.url}/v1")
    message = str(caught.value)
    assert f"{wire.url}/v1/api/version refused the request: HTTP 404 Not Found" in message
    assert "404 page not found" in message
    assert "--base-url, $OPENAI_BASE_URL or $OLLAMA_HOST" in message


def test_server_down_is_backend_unavailable(dead_url: str) -> None:
    with pytest.raises(BackendUnavailable) as caught:
        _backend(dead_url)
    assert dead_url in str(caught.value)
    assert "ollama serve" in str(caught.value)


def test_transient_http_500_is_retried(wire: OllamaWire) -> None:
    backend = _backend(wire.url)
    wire.fail_next(2)
    generation = backend.generate(MESSAGES, OPTIONS)
    assert generation.text == DEFAULT_REPLY
    assert len(wire.chat_bodies) == 3
    assert wire.chat_bodies[0] == wire.chat_bodies[2]


def test_http_500_forever_gives_up_with_backend_error(wire: OllamaWire) -> None:
    backend = _backend(wire.url)
    wire.fail_next(1000)
    with pytest.raises(BackendError) as caught:
        backend.generate(MESSAGES, OPTIONS)
    assert not isinstance(caught.value, BackendUnavailable)
    assert "HTTP 500" in str(caught.value)
    assert f"failed {RETRIES + 1} times" in str(caught.value)
    assert len(wire.chat_bodies) == RETRIES + 1


def test_ollama_host_without_scheme_is_accepted(
    wire: OllamaWire, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{wire.port}")
    endpoints = endpoints_from_env()
    assert endpoints.ollama_url == wire.url
    backend = create_backend("ollama/qwen3:8b", endpoints)
    assert backend.conditions()["base_url"] == wire.url
    assert backend.generate(MESSAGES, OPTIONS).text == DEFAULT_REPLY


def test_ollama_url_flag_wins_over_ollama_host(
    wire: OllamaWire, dead_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", dead_url)
    assert endpoints_from_env(ollama_url=f"{wire.url}/").ollama_url == wire.url


def test_cli_run_end_to_end(wire: OllamaWire, tmp_path: Path) -> None:
    wire.reply = lambda body: f"Here you go.\n\n```python\n{REFERENCE.rstrip()}\n```\n"
    result = _cli(
        "run",
        "--model",
        "ollama/qwen3:8b",
        "--ollama-url",
        wire.url,
        "--suite",
        "contracts10",
        "--task",
        "palindrome",
        "--runs-dir",
        str(tmp_path),
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "1/1" in result.stdout
    assert "Traceback" not in output

    manifests = list(tmp_path.glob("*/manifest.json"))
    assert len(manifests) == 1
    conditions = json.loads(manifests[0].read_text())["backends"]["ollama/qwen3:8b"]
    assert conditions["digest"] == wire.digest("qwen3:8b")
    assert conditions["server"] == "ollama 0.12.3"
    assert conditions["base_url"] == wire.url

    assert len(wire.chat_bodies) == 1  # passed first time: no repair request
    body = wire.chat_bodies[0]
    assert body["model"] == "qwen3:8b" and body["stream"] is False
    assert body["options"] == {"temperature": 0.0, "seed": 42, "num_ctx": 4096, "num_predict": 512}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "is_palindrome" in body["messages"][-1]["content"]


def test_cli_run_with_the_server_down(dead_url: str, tmp_path: Path) -> None:
    result = _cli(
        "run",
        "--model",
        "ollama/qwen3:8b",
        "--ollama-url",
        dead_url,
        "--task",
        "palindrome",
        "--runs-dir",
        str(tmp_path),
    )
    output = result.stdout + result.stderr
    assert result.returncode == BackendUnavailable.exit_code, output
    stderr = " ".join(result.stderr.split())  # undo any line wrapping
    assert dead_url in stderr
    assert "ollama serve" in stderr
    assert "Traceback" not in output
    assert list(tmp_path.iterdir()) == []  # no run directory for a run that never started


def _references(tasks: dict[str, Task]) -> Reply:
    """Answers each chat with the reference solution of the task it asks for."""

    def reply(body: dict[str, Any]) -> str:
        prompt = json.dumps(body["messages"])
        task = next(t for t in tasks.values() if f"def {t.entry_point}(" in prompt)
        return f"```python\n{(task.reference or '').rstrip()}\n```\n"

    return reply


def _stored(run_dir: Path) -> list[tuple[str, Outcome, str]]:
    store = RunStore.open(run_dir)
    try:
        return [(a.task_id, a.outcome, a.detail) for a in store.attempts()]
    finally:
        store.close()


TWO_TASKS = ("--task", "palindrome", "--task", "two_sum", "--repair-attempts", "0")


def test_cli_run_stops_when_the_server_loses_the_model(
    wire: OllamaWire, tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    """`ollama rm` after the first answer: the next chat is refused with 404, so the run
    stops, keeps the finished attempt, and resumes once the model is back."""
    pulled, references = wire.models, _references(contracts10)

    def answer_then_lose_the_model(body: dict[str, Any]) -> str:
        wire.models = [m for m in pulled if m["name"] != "qwen3:8b"]
        return references(body)

    wire.reply = answer_then_lose_the_model
    result = _cli(
        "run",
        "--model",
        "ollama/qwen3:8b",
        "--ollama-url",
        wire.url,
        *TWO_TASKS,
        "--runs-dir",
        str(tmp_path),
    )
    refused = f"{wire.url}/api/chat refused the request: HTTP 404 Not Found"
    run_dir, stderr = refused_and_saved(result, tmp_path, refused)
    assert "not found, try pulling it first" in stderr
    assert "an Ollama model must be pulled" in stderr
    assert len(wire.chat_bodies) == 2  # a 404 is not retried
    assert _stored(run_dir) == [("palindrome", Outcome.PASSED, "")]

    wire.models, wire.reply = pulled, references
    result = _cli("run", "--resume", str(run_dir), "--ollama-url", wire.url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [(task, outcome) for task, outcome, _ in _stored(run_dir)] == [
        ("palindrome", Outcome.PASSED),
        ("two_sum", Outcome.PASSED),
    ]
    assert len(wire.chat_bodies) == 3  # the finished attempt was not redone


def test_cli_run_records_a_failing_server_as_infra_error(
    wire: OllamaWire, tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    """HTTP 500 on every try is transient: an infra_error attempt, and the run goes on;
    --resume redoes it."""
    wire.reply = _references(contracts10)
    wire.fail_next(2 * (RETRIES + 1))
    result = _cli(
        "run",
        "--model",
        "ollama/qwen3:8b",
        "--ollama-url",
        wire.url,
        *TWO_TASKS,
        "--runs-dir",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (run_dir,) = tmp_path.iterdir()
    stored = _stored(run_dir)
    assert [(task, outcome) for task, outcome, _ in stored] == [
        ("palindrome", Outcome.INFRA_ERROR),
        ("two_sum", Outcome.INFRA_ERROR),
    ]
    assert all(f"failed {RETRIES + 1} times" in detail for _, _, detail in stored)

    result = _cli("run", "--resume", str(run_dir), "--ollama-url", wire.url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [outcome for _, outcome, _ in _stored(run_dir)] == [Outcome.PASSED, Outcome.PASSED]


def test_judge_reads_top_logprobs_from_the_wire(wire: OllamaWire) -> None:
    wire.top_logprobs = [
        ("Yes", math.log(0.6)),
        ("No", math.log(0.3)),
        (" yes", math.log(0.05)),
        ("Maybe", math.log(0.04)),
    ]
    judged = _backend(wire.url).yes_probability(MESSAGES, OPTIONS)
    assert judged == pytest.approx(0.65 / 0.95)
    body = wire.chat_bodies[-1]
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    assert body["options"]["num_predict"] == 1 and body["stream"] is False


def test_judge_on_an_ollama_without_logprobs_says_what_it_needs(wire: OllamaWire) -> None:
    with pytest.raises(ConfigError, match=r"0\.12\.11"):
        _backend(wire.url).yes_probability(MESSAGES, OPTIONS)
