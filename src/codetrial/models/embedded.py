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
from codetrial.errors import BackendError, BackendUnavailable, WeightsError
from codetrial.models.base import Kind, Readiness, register, yes_share
from codetrial.models.batched import Decoder, Request, check_fits, prompt_parts, prompt_tokens
from codetrial.models.hidden import POOLING, StateReader
from codetrial.models.weights import (
    EMBEDDED_MODELS,
    EmbeddedModel,
    find_embedded,
    label,
)
from codetrial.records import Generation, GenerationOptions, Message, wire


def threads() -> int:
    """The CPUs this process may run on (a taskset or cpuset narrows them), one
    llama.cpp thread each: a thread more than there are CPUs waits at every step."""
    return len(os.sched_getaffinity(0))


def runtime_version() -> str | None:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return None


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
        self._decoder: Decoder | None = None
        self._reader: StateReader | None = None

    @property
    def name(self) -> str:
        return label(self._model)

    def conditions(self) -> dict[str, str]:
        return {
            "model": self._model.name,
            "file_sha256": self._model.sha256,
            "file_size": str(self._model.size),
            "parameters": str(self._model.parameters),
            "runtime": f"llama-cpp-python {runtime_version()}",
            "threads": str(threads()),
            "kv_cache": "empty per request",
            "samples_of_one_prompt": "decoded together: one prompt evaluation, one batch per step",
        }

    def close(self) -> None:
        for part in (self._decoder, self._reader):
            if part is not None:
                part.close()
        self._decoder = self._reader = None
        self._llama = None

    def _load(self, options: GenerationOptions) -> Any:
        if self._llama is None or self._loaded_ctx != options.num_ctx:
            from llama_cpp import Llama

            try:
                self._llama = Llama(
                    model_path=str(self._path),
                    n_ctx=options.num_ctx,
                    seed=options.seed,
                    n_threads=threads(),
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise BackendUnavailable(
                    f"llama-cpp-python could not load {self._path}: {exc}"
                ) from exc
            self._loaded_ctx = options.num_ctx
        return self._llama

    def _chat(self, messages: Sequence[Message], options: GenerationOptions) -> Any:
        """The model and its chat completion of `messages`, computed from an empty KV
        cache so that it depends on `messages` and `options` alone: a resumed run
        replays the same text.

        Left alone, llama-cpp keeps the prefix this prompt shares with the previous
        request's tokens (the system message, or all of a repeated prompt) and evaluates
        only the rest, as a batch of another shape; that moves the logits, and sampled
        tokens with them. After `reset` it evaluates the whole prompt from position 0,
        dropping every cached entry. This request's tokens stay cached for scoring.
        A prompt the context window cannot hold raises PromptTooLong: llama-cpp refuses
        it before evaluating any of it, and says why only in a ValueError's text, so the
        prompt is measured then."""
        llama = self._load(options)
        llama.reset()
        try:
            return llama, llama.create_chat_completion(
                messages=wire(messages),
                temperature=options.temperature,
                seed=options.seed,
                max_tokens=options.max_tokens,
            )
        except (ValueError, RuntimeError) as exc:
            check_fits(prompt_tokens(llama, messages)[0], options.num_ctx)
            raise BackendError(f"embedded model failed on this prompt: {exc}") from exc

    continues_replies = True

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        if messages[-1].role == "assistant":
            return self.generate_together(messages, [options])[0]
        started = time.monotonic()
        llama, response = self._chat(messages, options)
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

    def generate_together(
        self, messages: Sequence[Message], options: Sequence[GenerationOptions]
    ) -> list[Generation]:
        (drawn,) = self.generate_many([(messages, options)])
        return drawn

    def generate_many(
        self, requests: Sequence[tuple[Sequence[Message], Sequence[GenerationOptions]]]
    ) -> list[list[Generation]]:
        """Per request, one generation per options, all decoded as one stream (see
        `batched`); each is charged an equal share of the wall time. When a request's
        messages end with the start of the reply, each text is that start and its
        continuation."""
        started = time.monotonic()
        first = requests[0][1][0]
        llama = self._load(first)
        shape = (llama, max(len(o) for _, o in requests), first.num_ctx, first.max_tokens)
        decoder = self._decoder
        if decoder is None or decoder.shape != shape:
            if decoder is not None:
                decoder.close()
            decoder = self._decoder = Decoder(*shape)
        try:
            asked = [Request(*prompt_tokens(llama, m), o) for m, o in requests]
            drawn = decoder.draw(asked)
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"embedded model failed on this prompt: {exc}") from exc
        share = (time.monotonic() - started) / sum(len(o) for _, o in requests)
        memory = _resident_kb()
        return [
            [
                Generation(
                    text=(m[-1].content if m[-1].role == "assistant" else "") + d.text,
                    prompt_tokens=len(request.prompt),
                    completion_tokens=len(d.tokens),
                    duration_s=share,
                    finish_reason=d.finish_reason,
                    logprob_sum=d.logprob_sum if d.tokens else None,
                    logprob_tokens=len(d.tokens) or None,
                    memory_kb=memory,
                )
                for d in per_request
            ]
            for (m, _), request, per_request in zip(requests, asked, drawn, strict=True)
        ]

    hidden_pooling = POOLING

    def hidden_state(
        self, messages: Sequence[Message], options: GenerationOptions
    ) -> tuple[np.ndarray, float]:
        """The model's hidden states over the chat prompt of `messages` (see `hidden`)
        and P(yes) from the same pass."""
        llama = self._load(options)
        reader = self._reader
        if reader is None or reader.shape != (llama, options.num_ctx):
            if reader is not None:
                reader.close()
            reader = self._reader = StateReader(llama, options.num_ctx)
        try:
            state, following = reader.read(prompt_parts(llama, messages)[0])
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"embedded model failed on this prompt: {exc}") from exc
        return state, self._yes(llama, following)

    def yes_probability(self, messages: Sequence[Message], options: GenerationOptions) -> float:
        """Read as `hidden_state` reads: the parts `messages` mark (the worked examples
        every judge prompt shows, a task's spec) are decoded once and kept."""
        return self.hidden_state(messages, options)[1]

    def _yes(self, llama: Any, logits: np.ndarray) -> float:
        if self._answers is None:
            self._answers = {word: _word_tokens(llama, word) for word in ("yes", "no")}
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
        total += _target_logprob(
            _logits(llama, chunk, n_prompt - 1 + start)[: len(targets)], targets
        )
    return total, len(tokens) - 1


def _create(rest: str, endpoints: Endpoints) -> EmbeddedBackend:
    return EmbeddedBackend(find_embedded(f"embedded/{rest}" if rest else "embedded"))


def _readiness(endpoints: Endpoints) -> list[Readiness]:
    runtime = runtime_version()
    states = []
    for model in EMBEDDED_MODELS.values():
        if runtime is None:
            states.append(Readiness(label(model), False, "llama-cpp-python is not installed"))
            continue
        if model.ready:
            states.append(
                Readiness(label(model), True, f"{model.path} (llama-cpp-python {runtime})")
            )
            continue
        try:
            model.chunk_paths()
        except WeightsError as exc:
            states.append(Readiness(label(model), False, str(exc)))
        else:
            states.append(
                Readiness(
                    label(model),
                    False,
                    "weights installed, not yet assembled: "
                    f"`codetrial models --prepare {model.short}`",
                )
            )
    return states


register(
    Kind(
        name="embedded",
        usage="|".join(label(m) for m in EMBEDDED_MODELS.values()),
        create=_create,
        readiness=_readiness,
    )
)
