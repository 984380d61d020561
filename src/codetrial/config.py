"""One validated run configuration; the only module that reads os.environ."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from codetrial.errors import ConfigError
from codetrial.records import GenerationOptions, labelled

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
DEFAULT_OPENAI_URL = "http://127.0.0.1:8000/v1"


@dataclass(frozen=True)
class ShapeDefaults:
    """Defaults that depend on the shape of task: a workspace prompt holds instructions
    and whole files, an answer may rewrite a file, and its tests run longer; a
    repository is written whole into the sandbox's scratch folder."""

    timeout_s: float
    num_ctx: int
    max_tokens: int
    scratch_mb: int = 64


FUNCTION_DEFAULTS = ShapeDefaults(timeout_s=10.0, num_ctx=4096, max_tokens=512)
WORKSPACE_DEFAULTS = ShapeDefaults(timeout_s=60.0, num_ctx=8192, max_tokens=2048)
REPOSITORY_DEFAULTS = ShapeDefaults(timeout_s=120.0, num_ctx=8192, max_tokens=2048, scratch_mb=512)
QUESTION_DEFAULTS = ShapeDefaults(timeout_s=30.0, num_ctx=8192, max_tokens=768)
PROGRAM_DEFAULTS = ShapeDefaults(timeout_s=10.0, num_ctx=8192, max_tokens=1024)
PREDICTION_DEFAULTS = ShapeDefaults(timeout_s=10.0, num_ctx=8192, max_tokens=512)
TIME_FACTOR = 4.0  # a calibrated case's CPU limit: this times the reference's (EvalPlus's)
TIME_FLOOR = 1.0  # and at least this many CPU seconds
# What program tasks may be judged by (--rules), the default first: a contest judge's,
# or LiveCodeBench's evaluator's (see codetrial.kinds.program).
RULES = ("contest", "livecodebench")


class Limits(BaseModel):
    """Resource limits applied to every sandboxed test run."""

    model_config = ConfigDict(frozen=True)

    timeout_s: float = Field(10.0, gt=0)
    cpu_s: int = Field(10, gt=0)
    memory_mb: int = Field(2048, gt=0)
    file_size_mb: int = Field(16, gt=0)
    open_files: int = Field(256, gt=0)
    output_bytes: int = Field(262_144, gt=0)
    scratch_mb: int = Field(64, gt=0)
    max_processes: int = Field(32, gt=0)
    allow_processes: bool = False
    allow_sockets: bool = False

    @classmethod
    def validated(cls, timeout_s: float, cpu_s: int | None = None, scratch_mb: int = 64) -> Limits:
        """Limits of `timeout_s` wall seconds and `cpu_s` CPU seconds (by default the
        timeout's, at least 1), and `scratch_mb` of scratch space; a ConfigError says
        what is wrong."""
        if timeout_s <= 0:
            raise ConfigError(f"--timeout must be above 0 seconds, not {timeout_s:g}")
        if cpu_s is not None and cpu_s < 1:
            raise ConfigError(f"--cpu-time must be at least 1 second, not {cpu_s}")
        return cls(
            timeout_s=timeout_s, cpu_s=cpu_s or max(1, int(timeout_s)), scratch_mb=scratch_mb
        )


class Endpoints(BaseModel):
    """Where the HTTP backends live. The API key is never written to the manifest."""

    model_config = ConfigDict(frozen=True)

    ollama_url: str = DEFAULT_OLLAMA_URL
    openai_url: str = DEFAULT_OPENAI_URL
    openai_api_key: str | None = Field(None, exclude=True, repr=False)
    request_timeout_s: float = 600.0


class Price(BaseModel):
    """What a model's tokens cost: US dollars per million prompt tokens and per
    million completion tokens."""

    model_config = ConfigDict(frozen=True)

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)

    @classmethod
    def parsed(cls, text: str) -> Price:
        """`IN/OUT`, dollars per million prompt and completion tokens ("3/15"); a
        ConfigError says what is wrong."""
        parts = text.split("/")
        try:
            prompt, completion = (float(part) for part in parts)
            return cls(prompt=prompt, completion=completion)
        except ValueError:
            raise ConfigError(
                f"--price takes MODEL=IN/OUT, dollars per million prompt and completion "
                f"tokens (gpt-4o=2.5/10), not {text!r}"
            ) from None

    @classmethod
    def assigned(cls, text: str) -> tuple[str, Price]:
        """--price's `MODEL=IN/OUT`, split at its last "=" (a model's name may hold one)."""
        model, sep, price = text.rpartition("=")
        if not sep or not model:
            raise ConfigError(f"--price takes MODEL=IN/OUT (gpt-4o=2.5/10), not {text!r}")
        return model, cls.parsed(price)

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


class RunConfig(BaseModel):
    """Every condition of a run; defaults are the fixed conditions of the seed experiment."""

    model_config = ConfigDict(frozen=True)

    models: list[str] = ["embedded"]
    suite: str = "contracts10"
    data: Path | None = None
    task_ids: list[str] = []
    since: date | None = None  # the contamination window: problems released in it only
    until: date | None = None
    temperature: float = Field(0.0, ge=0)
    seed: int = 42
    think: bool = False
    num_ctx: int = Field(4096, gt=0)
    max_tokens: int = Field(512, gt=0)
    repair_attempts: int = Field(1, ge=0)
    samples: int = Field(1, gt=0)
    workers: int = Field(1, gt=0)
    gate_profile: str = "builtins-only"
    edit_format: str | None = None  # how workspace tasks are answered; None without any
    prompt_profile: str | None = None  # how benchmark tasks are first asked; None without any
    modes: list[
        str
    ] = []  # how questions are answered (see codetrial.kinds.question); [] without any
    packages: list[str] = []  # the libraries every task may import, instead of its own
    repos: Path | None = None  # the clones repository tasks are checked out from
    wheels: Path | None = None  # where their package environments are built from
    unsafe_host_exec: bool = False
    efficiency: bool = True  # passing candidates measured against the references
    prices: dict[str, Price] = {}  # model -> what its tokens cost; an unpriced one costs 0
    limits: Limits = Limits()
    time_factor: float = Field(TIME_FACTOR, gt=0)  # program tasks' calibrated CPU limits:
    time_floor: float = Field(TIME_FLOOR, gt=0)  # factor x the reference's, at least floor
    rules: str | None = None  # what program tasks are judged by: contest or livecodebench
    endpoints: Endpoints = Endpoints()

    @field_validator("models")
    @classmethod
    def _some_model(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one --model is needed")
        if len(set(value)) != len(value):
            raise ValueError("a model is named twice")
        return value

    @classmethod
    def validated(cls, fields: dict[str, Any]) -> RunConfig:
        """A configuration from command-line options; a ConfigError says what is wrong."""
        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            raise ConfigError(problem(exc)) from exc

    @property
    def labels(self) -> list[str]:
        """What attempts are shown under: each model, or for questions each model in
        each mode (see `labelled`)."""
        return [label for model in self.models for label in self.labels_of(model)]

    def labels_of(self, model: str) -> list[str]:
        return [labelled(model, mode) for mode in self.modes] if self.modes else [model]

    def options(self, sample: int = 0) -> GenerationOptions:
        """Sample i is drawn with seed + i, so samples differ yet replay exactly."""
        return GenerationOptions(
            temperature=self.temperature,
            seed=self.seed + sample,
            max_tokens=self.max_tokens,
            num_ctx=self.num_ctx,
            think=self.think,
        )


def problem(exc: ValidationError) -> str:
    """The first thing wrong, as `field.path: message`, without pydantic's links."""
    first = exc.errors()[0]
    where = ".".join(map(str, first["loc"]))
    return f"{where}: {first['msg']}" if where else first["msg"]


def _ollama_url(value: str) -> str:
    """Read an address the way Ollama does: scheme, host and port each optional."""
    scheme, _, rest = value.rpartition("://")
    host, _, port = rest.rstrip("/").partition(":")
    default_port = {"http": "80", "https": "443"}.get(scheme, "11434")
    return f"{scheme or 'http'}://{host or '127.0.0.1'}:{port or default_port}"


def endpoints_from_env(
    ollama_url: str | None = None,
    openai_url: str | None = None,
    openai_api_key: str | None = None,
) -> Endpoints:
    """Flags win over the environment (OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY)."""
    return Endpoints(
        ollama_url=_ollama_url(ollama_url or os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_URL),
        openai_url=(openai_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_URL).rstrip(
            "/"
        ),
        openai_api_key=openai_api_key or os.environ.get("OPENAI_API_KEY"),
    )


def cache_dir() -> Path:
    """Where assembled model weights live: $CODETRIAL_CACHE, else the XDG cache."""
    explicit = os.environ.get("CODETRIAL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "codetrial"


def toolchains_dir() -> Path:
    """Where `make toolchains` installs what is not a system package (JavaScript's test
    runner): $CODETRIAL_TOOLCHAINS, else `toolchains` in the environment codetrial
    runs in (the project's .venv)."""
    explicit = os.environ.get("CODETRIAL_TOOLCHAINS")
    return Path(explicit) if explicit else Path(sys.prefix) / "toolchains"


def reviewer() -> str:
    """Who records a review decision when no one is named: $USER, else "unknown"."""
    return os.environ.get("USER") or "unknown"
