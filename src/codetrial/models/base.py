"""The backend protocol and its registry: one door for every model backend.

A model name is `<kind>` or `<kind>/<rest>`: `embedded`, `ollama/<tag>`,
`openai/<model>`, `scripted/<file.json>`. Built-in kinds register here the same way
a plugin would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from codetrial.config import Endpoints
from codetrial.errors import ConfigError
from codetrial.records import Generation, GenerationOptions, Message


class Backend(Protocol):
    @property
    def name(self) -> str: ...

    def conditions(self) -> dict[str, str]:
        """What the manifest must record: model digest or file hash, server version..."""
        ...

    def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
        """One completion. Raises BackendError (one request failed) or BackendUnavailable."""
        ...

    def close(self) -> None:
        """Release connections or loaded weights."""
        ...


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


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    if kind.name in KINDS:
        raise ValueError(f"backend kind {kind.name!r} registered twice")
    KINDS[kind.name] = kind


def create_backend(model: str, endpoints: Endpoints) -> Backend:
    """Build the backend for a model name; unknown names get the list of known forms."""
    kind_name, _, rest = model.partition("/")
    kind = KINDS.get(kind_name)
    if kind is None:
        known = ", ".join(k.usage for k in KINDS.values())
        raise ConfigError(f"unknown model {model!r}; known forms: {known}")
    return kind.create(rest, endpoints)
