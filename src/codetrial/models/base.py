"""The backend protocol and its registry: one door for every model backend.

A model name is `<kind>` or `<kind>/<rest>`: `embedded`, `ollama/<tag>`,
`openai/<model>`, `scripted/<file.json>`. Built-in kinds register here the same way
a plugin would.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from codetrial.config import Endpoints
from codetrial.errors import ConfigError
from codetrial.records import Generation, GenerationOptions, Message
from codetrial.registry import Registry


class Backend(Protocol):
    @property
    def name(self) -> str: ...

    def conditions(self) -> dict[str, str]:
        """What the manifest must record: model digest or file hash, server version..."""
        ...

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        """One completion. Raises BackendError (one request failed) or BackendUnavailable."""
        ...

    def yes_probability(self, messages: Sequence[Message], options: GenerationOptions) -> float:
        """P("yes") / (P("yes") + P("no")) for the answer's first token, read from the
        model's token distribution (not from a sampled word). Raises ConfigError when
        the backend cannot give token probabilities."""
        ...

    def close(self) -> None:
        """Release connections or loaded weights."""
        ...


@runtime_checkable
class DecodesTogether(Protocol):
    """A backend that draws several completions of one prompt at once, and of several
    prompts as one stream."""

    def generate_together(
        self, messages: Sequence[Message], options: Sequence[GenerationOptions]
    ) -> list[Generation]:
        """One generation per options (their seeds differ), in order. Raises as
        `generate` does, for all of them."""
        ...

    def generate_many(
        self, requests: Sequence[tuple[Sequence[Message], Sequence[GenerationOptions]]]
    ) -> list[list[Generation]]:
        """`generate_together` of each request, in order; what a request draws may
        depend on the requests drawn with it. Raises as `generate` does, for all."""
        ...


@runtime_checkable
class ContinuesReplies(Protocol):
    """A backend that, given messages ending with the start of the model's reply (an
    assistant message), continues that reply and returns it whole."""

    continues_replies: bool


@runtime_checkable
class ReadsStates(Protocol):
    """A backend that shows its model's hidden states over a prompt, summarised as
    `hidden_pooling` says."""

    hidden_pooling: str

    def hidden_state(
        self, messages: Sequence[Message], options: GenerationOptions
    ) -> tuple[Any, float]:
        """A float vector of one fixed width for this model, and from the same pass
        over the prompt what `yes_probability` reads: P("yes") / (P("yes") + P("no"))
        for the answer's first token. Raises BackendError."""
        ...


def continues_replies(backend: Backend) -> bool:
    return isinstance(backend, ContinuesReplies) and backend.continues_replies


def decodes_together(backend: Backend, samples: int) -> bool:
    return samples > 1 and isinstance(backend, DecodesTogether)


def generate_samples(
    backend: Backend, messages: Sequence[Message], options: Sequence[GenerationOptions]
) -> list[Generation]:
    """A generation of `messages` per options: together where the backend can."""
    if decodes_together(backend, len(options)):
        assert isinstance(backend, DecodesTogether)
        return backend.generate_together(messages, options)
    return [backend.generate(messages, o) for o in options]


TOP_LOGPROBS = 20


def yes_share(alternatives: Sequence[tuple[str, float]]) -> float:
    """P(yes) / (P(yes) + P(no)) from a first token's top alternatives (text, logprob;
    logits shifted by one constant do as well); any case, surrounding spaces ignored.
    0.5 when neither word is among them."""
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in alternatives:
        word = token.strip().lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else 0.5


def judged_yes(data: Any, path: Sequence[str | int], missing: str) -> float:
    """yes_share of the top_logprobs of the answer's first token, found at `path` in a
    response; ConfigError(`missing`) when the server sent none."""
    try:
        entry = data
        for step in path:
            entry = entry[step]
        alternatives = [(str(a["token"]), float(a["logprob"])) for a in entry["top_logprobs"]]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise ConfigError(missing) from exc
    if not alternatives:
        raise ConfigError(missing)
    return yes_share(alternatives)


@dataclass(frozen=True)
class Readiness:
    name: str
    ready: bool
    detail: str


@dataclass(frozen=True)
class Kind:
    """A registered backend kind: how to build one and how to tell whether it is ready."""

    name: str
    usage: str
    create: Callable[[str, Endpoints], Backend]
    readiness: Callable[[Endpoints], list[Readiness]]


KINDS: Registry[Kind] = Registry("model backend")  # the built-in kinds: see __init__


def register(kind: Kind) -> None:
    KINDS.register(kind.name, kind)


def create_backend(model: str, endpoints: Endpoints) -> Backend:
    """Build the backend for a model name; unknown names get the list of known forms.
    Only the named kind's module is imported."""
    kind_name, _, rest = model.partition("/")
    if kind_name not in KINDS:
        forms = [kind.usage for _, kind in KINDS.items()]
        raise ConfigError(f"unknown model {model!r}; known forms: {', '.join(forms)}")
    return KINDS.get(kind_name).create(rest, endpoints)
