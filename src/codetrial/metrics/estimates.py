"""pass@k with the unbiased estimator, and bootstrap confidence intervals over tasks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_SAMPLES = 2000
STANDARD_K = (1, 2, 5, 10, 20, 50, 100)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al. (2021): 1 - C(n-c, k) / C(n, k), computed as a stable product."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, this task has {n}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@dataclass(frozen=True)
class Estimate:
    """A mean over tasks with its 95% bootstrap interval (resampling tasks)."""

    value: float
    low: float
    high: float
    tasks: int

    def as_dict(self) -> dict[str, float | int]:
        return {"value": self.value, "low": self.low, "high": self.high, "tasks": self.tasks}

    def __str__(self) -> str:
        return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"


def bootstrap(per_task: Sequence[float], seed: int = 0) -> Estimate:
    values = np.asarray(per_task, dtype=float)
    if values.size == 0:
        raise ValueError("no tasks to estimate over")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, values.size, size=(BOOTSTRAP_SAMPLES, values.size))
    means = values[draws].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Estimate(float(values.mean()), float(low), float(high), int(values.size))


def ks_for(samples: int) -> list[int]:
    """The k reported for n samples per task: the standard ones up to n, and n itself."""
    return sorted({k for k in STANDARD_K if k <= samples} | {samples})


def pass_at_k_table(
    counts: Sequence[tuple[int, int]], ks: Sequence[int]
) -> dict[int, Estimate | None]:
    """pass@k over tasks given (samples, correct) per task; None where some task has
    fewer than k samples (not available, never 0 or 1)."""
    table: dict[int, Estimate | None] = {}
    for k in ks:
        if not counts or any(n < k for n, _ in counts):
            table[k] = None
        else:
            table[k] = bootstrap([pass_at_k(n, c, k) for n, c in counts])
    return table


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs: tasks that only A
    passed and tasks that only B passed (a binomial test at 1/2)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return float(min(1.0, 2 * tail))
