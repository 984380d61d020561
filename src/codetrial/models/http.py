"""JSON over HTTP for the server backends, with bounded retries.

Connection failures become BackendUnavailable with a message that names the URL and
how to start the server; a request the server refuses outright (a wrong API key, model
name or URL) becomes BackendRefused, which says what to fix; a prompt refused as too long
for the model's context window, in a shape an OpenAI-compatible server sends, becomes
PromptTooLong; other failures become BackendError after the retries.
"""

from __future__ import annotations

import re
import time
from typing import Any

import httpx

from codetrial.errors import BackendError, BackendRefused, BackendUnavailable, PromptTooLong

RETRIES = 2
_RETRYABLE_STATUS = {408, 429, 500, 502, 503, 504}
# Answers that every later request of the run would get too: what to fix for each.
_REFUSED_STATUS = {
    401: "the API key is missing or wrong: pass the right one with --api-key or set "
    "$OPENAI_API_KEY",
    403: "the API key may not use this model or endpoint: pass one that may with --api-key "
    "or $OPENAI_API_KEY",
    404: "check the model name given to --model (an Ollama model must be pulled) and the "
    "server's URL (--base-url, $OPENAI_BASE_URL or $OLLAMA_HOST; an OpenAI-compatible "
    "server's URL usually ends in /v1)",
}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _found(pattern: str, text: str) -> int | None:
    match = re.search(pattern, text)
    return int(match.group(1)) if match else None


def too_long(response: httpx.Response) -> PromptTooLong | None:
    """The server's refusal of a prompt too long for the model's context window, as
    OpenAI-compatible servers send it (HTTP 400): llama.cpp's server as the error type
    "exceed_context_size_error" with `n_prompt_tokens` and `n_ctx`; OpenAI and
    llama-cpp-python's server as the error code "context_length_exceeded", whose
    message alone holds the numbers. None for any other answer."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return None
    if not isinstance(error, dict):
        return None
    message = str(error.get("message") or "")
    if error.get("type") == "exceed_context_size_error":
        prompt, context = _count(error.get("n_prompt_tokens")), _count(error.get("n_ctx"))
    elif error.get("code") == "context_length_exceeded":
        prompt = _found(r"(\d+) in the messages", message)
        context = _found(r"maximum context length is (\d+)", message)
    else:
        return None
    return PromptTooLong(
        f"{response.request.url}: the prompt does not fit the model's context window: "
        f"{message[:300]}",
        prompt_tokens=prompt,
        context=context,
    )


class JsonClient:
    def __init__(self, base_url: str, how_to_start: str, timeout_s: float, headers: dict[str, str]):
        self.base_url = base_url
        self._how_to_start = how_to_start
        self._timeout_s = timeout_s
        self._client = httpx.Client(base_url=base_url, timeout=timeout_s, headers=headers)

    def _unreachable(self, exc: Exception) -> BackendUnavailable:
        return BackendUnavailable(
            f"model server not reachable at {self.base_url} ({exc.__class__.__name__}) — "
            f"{self._how_to_start}, or pass --model embedded"
        )

    def _refused(self, path: str, response: httpx.Response) -> BackendRefused:
        status = response.status_code
        said = f" ({text})" if (text := response.text[:300].strip()) else ""
        return BackendRefused(
            f"{self.base_url}{path} refused the request: HTTP {status} "
            f"{response.reason_phrase}{said} — {_REFUSED_STATUS[status]}"
        )

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Send one request; retry only what the server marks as transient.

        Raises BackendUnavailable (no server), BackendRefused (HTTP 401, 403, 404: the
        run's requests will all be refused), PromptTooLong (see `too_long`) or
        BackendError (this request failed)."""
        last: Exception | None = None
        for attempt in range(RETRIES + 1):
            if attempt:
                time.sleep(0.5 * 2**attempt)
            try:
                response = self._client.request(method, path, json=body)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                raise self._unreachable(exc) from exc
            except httpx.TimeoutException as exc:
                raise BackendError(
                    f"{self.base_url}{path}: no answer within {self._timeout_s:g} s"
                ) from exc
            except httpx.HTTPError as exc:
                last = exc
                continue
            if response.status_code in _RETRYABLE_STATUS:
                last = BackendError(
                    f"{self.base_url}{path}: HTTP {response.status_code}: {response.text[:300]}"
                )
                continue
            if response.status_code in _REFUSED_STATUS:
                raise self._refused(path, response)
            if response.status_code == 400 and (overflow := too_long(response)) is not None:
                raise overflow
            if response.status_code >= 400:
                raise BackendError(
                    f"{self.base_url}{path}: HTTP {response.status_code}: {response.text[:300]}"
                )
            try:
                return response.json()
            except ValueError as exc:
                raise BackendError(f"{self.base_url}{path}: the answer is not JSON") from exc
        raise BackendError(f"{self.base_url}{path} failed {RETRIES + 1} times: {last}")

    def object(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """A request whose answer must be a JSON object."""
        data = self.request(method, path, body)
        if not isinstance(data, dict):
            raise BackendError(f"{self.base_url}{path}: expected a JSON object in the answer")
        return data

    def close(self) -> None:
        self._client.close()
