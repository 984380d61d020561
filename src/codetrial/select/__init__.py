"""Choosing one candidate out of many, and measuring how good each way of choosing is.

A strategy scores every candidate of a task; the pick is the best-scored one, and
ties are taken in expectation (the chance that a uniform pick among the tied
candidates is correct). Hidden verdicts are used only to score the pick, never to
make it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from codetrial.errors import ConfigError


@dataclass(frozen=True)
class PoolCandidate:
    """One candidate: whether the hidden tests pass it (for scoring the pick only)
    and which generated tests it passes."""

    correct: bool
    passed_tests: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TaskPool:
    task_id: str
    candidates: Sequence[PoolCandidate]
    test_weights: dict[str, int] = field(default_factory=dict)


Strategy = Callable[[TaskPool], list[float]]
STRATEGIES: dict[str, Strategy] = {}


def strategy(name: str) -> Callable[[Strategy], Strategy]:
    def register(score: Strategy) -> Strategy:
        STRATEGIES[name] = score
        return score

    return register


@strategy("first")
def first_sample(pool: TaskPool) -> list[float]:
    return [1.0] + [0.0] * (len(pool.candidates) - 1)


@strategy("random")
def uniform(pool: TaskPool) -> list[float]:
    """Every candidate ties: the expected value of a random pick, not one draw."""
    return [0.0] * len(pool.candidates)


@strategy("oracle")
def oracle(pool: TaskPool) -> list[float]:
    """The ceiling: picks a correct candidate whenever there is one (pass@N)."""
    return [float(c.correct) for c in pool.candidates]


@strategy("codet")
def codet(pool: TaskPool) -> list[float]:
    """Dual execution agreement (Chen et al. 2022): candidates that pass the same set
    of generated tests form a group, scored (weight of those tests) x sqrt(group size).
    When no candidate passes any test, every candidate ties (a random pick)."""
    groups = Counter(c.passed_tests for c in pool.candidates)
    if not any(tests for tests in groups):
        return [0.0] * len(pool.candidates)
    score = {
        tests: sum(pool.test_weights.get(t, 1) for t in tests) * math.sqrt(size)
        for tests, size in groups.items()
    }
    return [score[c.passed_tests] for c in pool.candidates]


def expected_pick(pool: TaskPool, scores: Sequence[float]) -> float:
    """The chance that the pick is correct: ties among the best are taken uniformly."""
    best = max(scores)
    tied = [c for c, s in zip(pool.candidates, scores, strict=True) if s == best]
    return sum(c.correct for c in tied) / len(tied)


def select_pass_at_1(pools: Sequence[TaskPool], name: str) -> list[float]:
    """Per task, the expected correctness of the strategy's pick."""
    try:
        score = STRATEGIES[name]
    except KeyError:
        raise ConfigError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}") from None
    return [expected_pick(pool, score(pool)) if pool.candidates else 0.0 for pool in pools]
