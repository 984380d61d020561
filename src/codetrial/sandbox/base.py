"""The Sandbox interface: run a command over a set of files, under limits.

A sandbox knows nothing about tasks, tests or outcomes. It writes the files into a
fresh directory, runs the command there and reports how the process ended, what it
printed (capped) and the files the caller asked to read back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.records import SandboxRun


@dataclass(frozen=True)
class SandboxRequest:
    """`argv[0] == "python"` means the interpreter codetrial itself runs on."""

    files: Mapping[str, str]
    argv: tuple[str, ...]
    limits: Limits
    read_back: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SandboxResult:
    run: SandboxRun
    files: Mapping[str, bytes]


class Sandbox(Protocol):
    @property
    def isolation(self) -> str:
        """The isolation actually in force, for the manifest (e.g. 'process+rlimits')."""
        ...

    def run(self, request: SandboxRequest) -> SandboxResult:
        """Run the request; raise SandboxError only when the run could not start."""
        ...


SANDBOXES: dict[str, Callable[[], Sandbox]] = {}


def register(name: str) -> Callable[[Callable[[], Sandbox]], Callable[[], Sandbox]]:
    def add(factory: Callable[[], Sandbox]) -> Callable[[], Sandbox]:
        SANDBOXES[name] = factory
        return factory

    return add


def get_sandbox(name: str) -> Sandbox:
    try:
        return SANDBOXES[name]()
    except KeyError:
        raise ConfigError(f"unknown sandbox {name!r}; known: {', '.join(SANDBOXES)}") from None
