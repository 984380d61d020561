"""The default backend: a small code model run in-process by llama-cpp-python."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from codetrial.config import Endpoints
from codetrial.errors import BackendError, BackendUnavailable, ConfigError, WeightsError
from codetrial.models.base import Kind, Readiness, register, yes_share
from codetrial.models.weights import DEFAULT_EMBEDDED, EMBEDDED_MODELS, EmbeddedModel
from codetrial.records import Generation, GenerationOptions, Message, wire


def runtime_version() -> str | None:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return None


def _label(model: EmbeddedModel) -> str:
    return "embedded" if model.name == DEFAULT_EMBEDDED else f"embedded/{model.name}"


class EmbeddedBackend:
    """Loads the GGUF once per context size and answers through its chat template."""

    def __init__(self, model: EmbeddedModel) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise BackendUnavailable(
                "the embedded model needs llama-cpp-python, which is not installed: run "
                "`make run`, or `pip install 'codetrial[embedded]'`"
            )
        self._model = model
        self._path = model.prepare()
        self._llama: Any = None
        self._loaded_ctx: int | None = None
        self._answers: dict[str, list[int]] | None = None

    @property
    def name(self) -> str:
        return (
            "embedded" if self._model.name == DEFAULT_EMBEDDED else f"embedded/{self._model.name}"
        )

    def conditions(self) -> dict[str, str]:
        return {
            "model": self._model.name,
            "file_sha256": self._model.sha256,
            "file_size": str(self._model.size),
            "parameters": str(self._model.parameters),
            "runtime": f"llama-cpp-python {runtime_version()}",
            "threads": str(os.cpu_count()),
            "kv_cache": "empty per request",
        }

    def close(self) -> None:
        self._llama = None

    def _load(self, options: GenerationOptions) -> Any:
        if self._llama is None or self._loaded_ctx != options.num_ctx:
            from llama_cpp import Llama

            try:
                self._llama = Llama(
                    model_path=str(self._path),
                    n_ctx=options.num_ctx,
                    seed=options.seed,
                    n_threads=os.cpu_count(),
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise BackendUnavailable(
                    f"llama-cpp-python could not load {self._path}: {exc}"
                ) from exc
            self._loaded_ctx = options.num_ctx
        return self._llama

    def _chat(
        self, messages: Sequence[Message], options: GenerationOptions, max_tokens: int
    ) -> Any:
        """The model and its chat completion of `messages`, computed from an empty KV
        cache so that it depends on `messages`, `options` and `max_tokens` alone: a
        resumed run replays the same text.

        Left alone, llama-cpp keeps the prefix this prompt shares with the previous
        request's tokens (the system message, or all of a repeated prompt) and evaluates
        only the rest, as a batch of another shape; that moves the logits, and sampled
        tokens with them. After `reset` it evaluates the whole prompt from position 0,
        dropping every cached entry. This request's tokens stay cached for scoring."""
        llama = self._load(options)
        llama.reset()
        try:
            return llama, llama.create_chat_completion(
                messages=wire(messages),
                temperature=options.temperature,
                seed=options.seed,
                max_tokens=max_tokens,
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"embedded model failed on this prompt: {exc}") from exc

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        started = time.monotonic()
        llama, response = self._chat(messages, options, options.max_tokens)
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        logprob_sum, scored = _score_generated(llama, int(usage.get("prompt_tokens") or 0))
        return Generation(
            text=choice["message"].get("content") or "",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            duration_s=time.monotonic() - started,
            finish_reason=choice.get("finish_reason"),
            logprob_sum=logprob_sum,
            logprob_tokens=scored,
            memory_kb=_resident_kb(),
        )

    def yes_probability(self, messages: Sequence[Message], options: GenerationOptions) -> float:
        llama, response = self._chat(messages, options, 1)
        if self._answers is None:
            self._answers = {word: _word_tokens(llama, word) for word in ("yes", "no")}
        n_prompt = int((response.get("usage") or {}).get("prompt_tokens") or 0)
        logits = _logits(llama, [int(llama.input_ids[n_prompt - 1])], n_prompt - 1)[0]
        shifted = logits - logits.max()
        return yes_share([(w, float(shifted[i])) for w, ids in self._answers.items() for i in ids])


def _resident_kb() -> int | None:
    """This process's resident memory now (the model, its context and codetrial),
    read after a generation while its buffers are still held. The process's peak would
    also count an earlier model of the same process."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def _word_tokens(llama: Any, word: str) -> list[int]:
    """The single tokens that spell `word` as an answer's start, in its usual cases."""
    found = set()
    for text in (word, word.capitalize(), word.upper(), f" {word}", f" {word.capitalize()}"):
        tokens = llama.tokenize(text.encode(), add_bos=False, special=False)
        if len(tokens) == 1:
            found.add(tokens[0])
    return sorted(found)


def _logits(llama: Any, tokens: list[int], n_past: int) -> np.ndarray:
    """Decode `tokens` at position `n_past` with every position's logits (float64)."""
    llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llama._batch.set_batch(batch=tokens, n_past=n_past, logits_all=True)
    llama._ctx.decode(llama._batch)
    shape = (len(tokens), llama.n_vocab())
    return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=shape).astype(np.float64)


def _target_logprob(rows: np.ndarray, targets: list[int]) -> float:
    """The summed log-softmax of each row at its target, computed in place in `rows`
    rather than as a second vocabulary-wide matrix."""
    top = rows.max(axis=1, keepdims=True)
    picked = rows[np.arange(len(targets)), targets][:, None]
    np.subtract(rows, top, out=rows)
    np.exp(rows, out=rows)
    return float((picked - top - np.log(rows.sum(axis=1, keepdims=True))).sum())


def _score_generated(llama: Any, n_prompt: int) -> tuple[float | None, int | None]:
    """The model's log-probability of the tokens it just generated, from one batched
    pass over them (the prompt stays cached). Asking llama-cpp for per-token logprobs
    while generating costs about 7x the generation; this costs a prompt-speed pass.
    Scores every generated token the model evaluated (the last one sampled, usually
    the end-of-turn token, never is)."""
    tokens = [int(t) for t in llama.input_ids[max(n_prompt - 1, 0) : llama.n_tokens]]
    if n_prompt < 1 or len(tokens) < 2:
        return None, None
    total = 0.0
    for start in range(0, len(tokens) - 1, llama.n_batch):
        chunk = tokens[start : start + llama.n_batch]
        targets = tokens[start + 1 : start + 1 + len(chunk)]
        total += _target_logprob(_logits(llama, chunk, n_prompt - 1 + start)[: len(targets)],
                                 targets)  # fmt: skip
    return total, len(tokens) - 1


def _create(rest: str, endpoints: Endpoints) -> EmbeddedBackend:
    name = rest or DEFAULT_EMBEDDED
    if name not in EMBEDDED_MODELS:
        raise ConfigError(
            f"unknown embedded model {name!r}; embedded models: {', '.join(EMBEDDED_MODELS)}"
        )
    return EmbeddedBackend(EMBEDDED_MODELS[name])


def _readiness(endpoints: Endpoints) -> list[Readiness]:
    runtime = runtime_version()
    states = []
    for model in EMBEDDED_MODELS.values():
        label = _label(model)
        if runtime is None:
            states.append(Readiness(label, False, "llama-cpp-python is not installed"))
            continue
        if model.ready:
            states.append(Readiness(label, True, f"{model.path} (llama-cpp-python {runtime})"))
            continue
        try:
            model.chunk_paths()
        except WeightsError as exc:
            states.append(Readiness(label, False, str(exc)))
        else:
            states.append(
                Readiness(
                    label,
                    False,
                    "weights installed, not yet assembled: `codetrial models --prepare`",
                )
            )
    return states


register(
    Kind(
        name="embedded",
        usage="embedded[/<name>]",
        create=_create,
        readiness=_readiness,
    )
)
