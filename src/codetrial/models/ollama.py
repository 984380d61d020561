"""Ollama's native API: /api/chat, with the tag's digest and the server version recorded."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from codetrial.config import Endpoints
from codetrial.errors import BackendError, BackendUnavailable, ConfigError
from codetrial.models.base import TOP_LOGPROBS, Kind, Readiness, judged_yes, register
from codetrial.models.http import JsonClient
from codetrial.records import Generation, GenerationOptions, Message, wire

_HOW_TO_START = "start it with `ollama serve`, set OLLAMA_HOST or pass --base-url"


def _client(endpoints: Endpoints) -> JsonClient:
    return JsonClient(endpoints.ollama_url, _HOW_TO_START, endpoints.request_timeout_s, {})


def _models(http: JsonClient) -> list[dict[str, Any]]:
    models = http.object("GET", "/api/tags").get("models") or []
    if not isinstance(models, list) or not all(isinstance(m, dict) for m in models):
        raise BackendError(f"{http.base_url}/api/tags: 'models' is not a list of objects")
    return models


class OllamaBackend:
    def __init__(self, tag: str, endpoints: Endpoints) -> None:
        if not tag:
            raise ConfigError("name the Ollama model: --model ollama/<tag>, e.g. ollama/qwen3:8b")
        self._tag = tag
        self._http = _client(endpoints)
        self._version = str(self._http.object("GET", "/api/version").get("version", "unknown"))
        models = _models(self._http)
        entries = {m.get("name"): m for m in models} | {m.get("model"): m for m in models}
        wanted = tag if ":" in tag else f"{tag}:latest"
        if wanted not in entries:
            known = ", ".join(sorted(str(m.get("name")) for m in models)) or "none"
            raise ConfigError(
                f"Ollama at {endpoints.ollama_url} has no model {tag!r} — pull it with "
                f"`ollama pull {tag}`; models there: {known}"
            )
        self._digest = str(entries[wanted].get("digest", ""))
        details = entries[wanted].get("details")
        size = details.get("parameter_size") if isinstance(details, dict) else None
        self._parameters = str(size or "")

    @property
    def name(self) -> str:
        return f"ollama/{self._tag}"

    def conditions(self) -> dict[str, str]:
        return {
            "tag": self._tag,
            "digest": self._digest,
            "server": f"ollama {self._version}",
            "base_url": self._http.base_url,
            "parameters": self._parameters,
        }

    def close(self) -> None:
        self._http.close()

    def _body(self, messages: Sequence[Message], options: GenerationOptions) -> dict[str, Any]:
        return {
            "model": self._tag,
            "messages": wire(messages),
            "stream": False,
            "think": options.think,
            "options": {
                "temperature": options.temperature,
                "seed": options.seed,
                "num_ctx": options.num_ctx,
                "num_predict": options.max_tokens,
            },
        }

    def yes_probability(self, messages: Sequence[Message], options: GenerationOptions) -> float:
        first_token = dataclasses.replace(options, temperature=0.0, max_tokens=1, think=False)
        body = self._body(messages, first_token) | {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
        data = self._http.object("POST", "/api/chat", body)
        return judged_yes(
            data,
            ("logprobs", 0),
            f"Ollama at {self._http.base_url} gave no top_logprobs for the answer's first "
            "token; a judge needs Ollama 0.12.11 or later",
        )

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        body = self._body(messages, options)
        started = time.monotonic()
        data = self._http.object("POST", "/api/chat", body)
        message = data.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise BackendError(f"{self._http.base_url}/api/chat answered without message.content")
        return Generation(
            text=message["content"],
            prompt_tokens=data.get("prompt_eval_count"),
            completion_tokens=data.get("eval_count"),
            duration_s=time.monotonic() - started,
            finish_reason=data.get("done_reason"),
        )


def _readiness(endpoints: Endpoints) -> list[Readiness]:
    client = _client(endpoints)
    try:
        models = _models(client)
    except (BackendUnavailable, BackendError) as exc:
        return [Readiness("ollama/<tag>", False, str(exc))]
    finally:
        client.close()
    if not models:
        return [Readiness("ollama/<tag>", False, f"{endpoints.ollama_url}: no models pulled")]
    return [Readiness(f"ollama/{m['name']}", True, m.get("digest", "")[:12]) for m in models]


register(
    Kind(
        name="ollama",
        usage="ollama/<tag>",
        create=OllamaBackend,
        readiness=_readiness,
    )
)
