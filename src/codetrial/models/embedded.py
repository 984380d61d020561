"""The default backend: a small code model run in-process by llama-cpp-python."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import time
from collections.abc import Sequence
from typing import Any

from codetrial.config import Endpoints
from codetrial.errors import BackendError, BackendUnavailable, ConfigError, WeightsError
from codetrial.models.base import Kind, Readiness, register
from codetrial.models.weights import DEFAULT_EMBEDDED, EMBEDDED_MODELS, EmbeddedModel
from codetrial.records import Generation, GenerationOptions, Message


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
            "runtime": f"llama-cpp-python {runtime_version()}",
            "threads": str(os.cpu_count()),
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

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        llama = self._load(options)
        started = time.monotonic()
        try:
            response = llama.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages],
                temperature=options.temperature,
                seed=options.seed,
                max_tokens=options.max_tokens,
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"embedded model failed on this prompt: {exc}") from exc
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Generation(
            text=choice["message"].get("content") or "",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            duration_s=time.monotonic() - started,
            finish_reason=choice.get("finish_reason"),
        )


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
