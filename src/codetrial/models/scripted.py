"""A deterministic backend that replays given responses; the real pipeline runs on it.

A script maps a key to a list of responses (for a judge's prompt, probabilities of
"yes" written as text, e.g. "0.8"). A request gets the next response of the
first key found in its last message (the function's name is a good key); the last
response repeats once a list is used up. `scripted/<file.json>` loads a script from
a JSON object of that shape. Every request is kept in `requests` for inspection.

It keeps to the run's limits as a model does, counting whitespace-separated words as
tokens: a response longer than `max_tokens` words is cut after that many (finish
reason "length"), and a prompt of `num_ctx` words or more is refused (PromptTooLong).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from codetrial.config import Endpoints
from codetrial.errors import BackendError, ConfigError, PromptTooLong
from codetrial.models.base import Kind, Readiness, register
from codetrial.records import CUT_OFF, Generation, GenerationOptions, Message


class ScriptedBackend:
    def __init__(self, script: Mapping[str, Sequence[str]], label: str = "scripted") -> None:
        if not script or not all(script.values()):
            raise ConfigError("a scripted backend needs at least one response per key")
        self._script = {key: list(responses) for key, responses in script.items()}
        self._served = dict.fromkeys(self._script, 0)
        self._label = label
        self.requests: list[list[Message]] = []

    @property
    def name(self) -> str:
        return self._label

    def conditions(self) -> dict[str, str]:
        return {"responses": str(sum(len(r) for r in self._script.values()))}

    def close(self) -> None:
        """Nothing to release."""

    def _next(self, messages: Sequence[Message]) -> str:
        self.requests.append(list(messages))
        prompt = messages[-1].content
        key = next((k for k in self._script if k in prompt), None)
        if key is None:
            raise BackendError("the scripted backend has no response for this prompt")
        responses = self._script[key]
        self._served[key] += 1
        return responses[min(self._served[key] - 1, len(responses) - 1)]

    def yes_probability(self, messages: Sequence[Message], options: GenerationOptions) -> float:
        """The scripted response, read as the probability itself (e.g. "0.8")."""
        text = self._next(messages)
        try:
            return min(1.0, max(0.0, float(text)))
        except ValueError:
            raise BackendError(
                f"a scripted judge answers with a probability, not {text!r}"
            ) from None

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        prompt = sum(len(m.content.split()) for m in messages)
        if prompt >= options.num_ctx:
            raise PromptTooLong(
                f"the prompt's {prompt} words exceed the scripted model's context window "
                f"of {options.num_ctx}",
                prompt_tokens=prompt,
                context=options.num_ctx,
            )
        text = self._next(messages)
        words = list(re.finditer(r"\S+", text))
        cut = len(words) > options.max_tokens
        return Generation(
            text=text[: words[options.max_tokens - 1].end()] if cut else text,
            prompt_tokens=prompt,
            completion_tokens=min(len(words), options.max_tokens),
            duration_s=0.0,
            finish_reason=CUT_OFF if cut else "stop",
        )


def _create(rest: str, endpoints: Endpoints) -> ScriptedBackend:
    path = Path(rest)
    try:
        script = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"scripted/{rest}: cannot read a JSON script there ({exc}); the file must hold "
            '{"<key found in the prompt>": ["response", ...]}'
        ) from exc
    if not isinstance(script, dict) or not all(
        isinstance(v, list) and all(isinstance(x, str) for x in v) for v in script.values()
    ):
        raise ConfigError(f"{path}: expected an object mapping keys to lists of strings")
    return ScriptedBackend(script, label=f"scripted/{rest}")


register(
    Kind(
        name="scripted",
        usage="scripted/<script.json>",
        create=_create,
        readiness=lambda endpoints: [
            Readiness("scripted/<script.json>", True, "replays responses from a JSON file")
        ],
    )
)
