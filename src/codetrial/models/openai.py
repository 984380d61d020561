"""Any OpenAI-compatible /v1/chat/completions server (vLLM, llama.cpp, LM Studio, APIs)."""

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

_HOW_TO_START = (
    "start an OpenAI-compatible server (e.g. `python -m llama_cpp.server --model FILE`), "
    "set OPENAI_BASE_URL or pass --base-url"
)


def _client(endpoints: Endpoints) -> JsonClient:
    headers = {}
    if endpoints.openai_api_key:
        headers["Authorization"] = f"Bearer {endpoints.openai_api_key}"
    return JsonClient(endpoints.openai_url, _HOW_TO_START, endpoints.request_timeout_s, headers)


def _served(client: JsonClient) -> list[str]:
    data = client.object("GET", "/models").get("data") or []
    if not isinstance(data, list):
        raise BackendError(f"{client.base_url}/models: 'data' is not a list")
    return [str(m.get("id")) for m in data if isinstance(m, dict)]


class OpenAIBackend:
    def __init__(self, model: str, endpoints: Endpoints) -> None:
        if not model:
            raise ConfigError("name the served model: --model openai/<model>")
        self._model = model
        self._http = _client(endpoints)
        served = _served(self._http)
        if served and model not in served:
            raise ConfigError(
                f"the server at {endpoints.openai_url} does not serve {model!r}; "
                f"it serves: {', '.join(served)}"
            )
        self._fingerprint = ""

    @property
    def name(self) -> str:
        return f"openai/{self._model}"

    def conditions(self) -> dict[str, str]:
        return {
            "model": self._model,
            "base_url": self._http.base_url,
            "system_fingerprint": self._fingerprint,
        }

    def close(self) -> None:
        self._http.close()

    def _body(self, messages: Sequence[Message], options: GenerationOptions) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": wire(messages),
            "temperature": options.temperature,
            "seed": options.seed,
            "max_tokens": options.max_tokens,
        }

    def yes_probability(self, messages: Sequence[Message], options: GenerationOptions) -> float:
        first_token = dataclasses.replace(options, temperature=0.0, max_tokens=1)
        body = self._body(messages, first_token) | {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
        data = self._http.object("POST", "/chat/completions", body)
        return judged_yes(
            data,
            ("choices", 0, "logprobs", "content", 0),
            f"{self._http.base_url} gave no top_logprobs for the answer's first token; "
            "a judge needs a server that returns token log-probabilities",
        )

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        body = self._body(messages, options)
        started = time.monotonic()
        data = self._http.object("POST", "/chat/completions", body)
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise BackendError(
                f"{self._http.base_url}/chat/completions answered without choices[0].message"
            ) from exc
        self._fingerprint = str(data.get("system_fingerprint") or self._fingerprint)
        usage = data.get("usage") or {}
        return Generation(
            text=text,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            duration_s=time.monotonic() - started,
            finish_reason=choice.get("finish_reason"),
        )


def _readiness(endpoints: Endpoints) -> list[Readiness]:
    client = _client(endpoints)
    try:
        served = _served(client)
    except (BackendUnavailable, BackendError) as exc:
        return [Readiness("openai/<model>", False, str(exc))]
    finally:
        client.close()
    return [Readiness(f"openai/{m}", True, endpoints.openai_url) for m in served]


register(
    Kind(
        name="openai",
        usage="openai/<model>",
        create=OpenAIBackend,
        readiness=_readiness,
    )
)
