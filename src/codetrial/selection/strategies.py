"""Choosing one candidate out of many, and measuring how good each way of choosing is.

A strategy scores every candidate of a task; the pick is the best-scored one, and
ties are taken in expectation (the chance that a uniform pick among the tied
candidates is correct). Hidden verdicts are used only to score the pick, never to
make it: a strategy sees the code, its likelihood, its visible-test results, the
generated tests it passes, its outputs on generated inputs and what a judge said.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from codetrial.errors import ConfigError
from codetrial.metrics import Estimate, bootstrap, mcnemar_exact
from codetrial.registry import Registry

JUDGE_THRESHOLD = 0.5
TRAINED_THRESHOLD = 0.9


@dataclass(frozen=True)
class PoolCandidate:
    """One candidate and what the strategies may know about it. `correct` (the hidden
    verdict) only scores the pick; `judge_yes` is a judge's probability that the code
    is correct, `trained_yes` a trained judge's; `ranker_score` is a learned ranker's,
    from a model that never saw this task."""

    correct: bool
    code: str | None = None
    passed_tests: frozenset[str] = frozenset()
    mean_logprob: float | None = None
    visible_passed: int = 0
    outputs: tuple[str, ...] | None = None
    judge_yes: float | None = None
    trained_yes: float | None = None
    ranker_score: float | None = None


@dataclass(frozen=True)
class TaskPool:
    task_id: str
    candidates: Sequence[PoolCandidate]
    test_weights: dict[str, int] = field(default_factory=dict)


Score = Callable[[TaskPool], list[float]]


class Need(StrEnum):
    """Evidence a strategy reads beyond the stored attempts, gathered before it runs."""

    TESTS = "tests"  # which generated tests each candidate passes
    OUTPUTS = "outputs"  # the candidate's outputs on the generated tests' inputs
    JUDGE = "judge"  # a judge model's P("yes")
    STATES = "states"  # a trained judge's P(correct), from the judge model's hidden states


@dataclass(frozen=True)
class Strategy:
    name: str
    score: Score
    needs: frozenset[Need]


STRATEGIES: Registry[Strategy] = Registry("strategy")


def strategy(name: str, *needs: Need) -> Callable[[Score], Score]:
    def register(score: Score) -> Score:
        STRATEGIES.register(name, Strategy(name, score, frozenset(needs)))
        return score

    return register


def _ties(pool: TaskPool) -> list[float]:
    return [0.0] * len(pool.candidates)


def _missing_last(scores: Iterable[float | None]) -> list[float]:
    return [score if score is not None else -math.inf for score in scores]


@strategy("random")
def uniform(pool: TaskPool) -> list[float]:
    """Every candidate ties: the expected value of a random pick, not one draw."""
    return _ties(pool)


@strategy("first")
def first_sample(pool: TaskPool) -> list[float]:
    return [1.0] + [0.0] * (len(pool.candidates) - 1)


@strategy("likelihood")
def likelihood(pool: TaskPool) -> list[float]:
    """Mean token log-probability (length-normalised); candidates without one rank last."""
    return _missing_last(c.mean_logprob for c in pool.candidates)


@strategy("visible-tests")
def visible_tests(pool: TaskPool) -> list[float]:
    """Most visible tests passed; a task without visible tests ties every candidate."""
    return [float(c.visible_passed) for c in pool.candidates]


@strategy("codet", Need.TESTS)
def codet(pool: TaskPool) -> list[float]:
    """Dual execution agreement (Chen et al. 2022): candidates that pass the same set
    of generated tests form a group, scored (weight of those tests) x sqrt(group size).
    When no candidate passes any test, every candidate ties (a random pick)."""
    groups = Counter(c.passed_tests for c in pool.candidates)
    if not any(tests for tests in groups):
        return _ties(pool)
    score = {
        tests: sum(pool.test_weights.get(t, 1) for t in tests) * math.sqrt(size)
        for tests, size in groups.items()
    }
    return [score[c.passed_tests] for c in pool.candidates]


@strategy("consensus", Need.TESTS, Need.OUTPUTS)
def consensus(pool: TaskPool) -> list[float]:
    """Candidates that give the same outputs on the generated inputs form a cluster
    (MBR-exec / AlphaCode style); a candidate scores its cluster's size. Candidates
    that ran on no input rank last; without inputs every candidate ties."""
    clusters = Counter(c.outputs for c in pool.candidates if c.outputs)
    if not clusters:
        return _ties(pool)
    return [float(clusters[c.outputs]) if c.outputs else -1.0 for c in pool.candidates]


def _unless_abstaining(
    pool: TaskPool, said: Iterable[float | None], threshold: float
) -> list[float]:
    """A judge's probabilities of "correct"; when no candidate reaches the threshold
    the judge abstains and every candidate ties."""
    confidence = [p if p is not None else 0.0 for p in said]
    if max(confidence, default=0.0) < threshold:
        return _ties(pool)
    return confidence


@strategy("judge", Need.JUDGE)
def judge(pool: TaskPool) -> list[float]:
    """The judge's probability of "yes"; it abstains below 0.5."""
    return _unless_abstaining(pool, (c.judge_yes for c in pool.candidates), JUDGE_THRESHOLD)


@strategy("trained-judge", Need.STATES)
def trained_judge(pool: TaskPool) -> list[float]:
    """A judge trained on execution labels: its P(correct), read from the judge model's
    hidden states; candidates it did not read rank last."""
    return _missing_last(c.trained_yes for c in pool.candidates)


@strategy("trained-judge-0.9", Need.STATES)
def trained_judge_confident(pool: TaskPool) -> list[float]:
    """The trained judge where it is confident: it abstains unless a candidate reaches
    P(correct) 0.9."""
    return _unless_abstaining(pool, (c.trained_yes for c in pool.candidates), TRAINED_THRESHOLD)


@strategy("ranker", Need.TESTS, Need.OUTPUTS)
def ranker(pool: TaskPool) -> list[float]:
    """A learned ranker's probability that the candidate is correct."""
    return _missing_last(c.ranker_score for c in pool.candidates)


@strategy("oracle")
def oracle(pool: TaskPool) -> list[float]:
    """The ceiling: picks a correct candidate whenever there is one (pass@N)."""
    return [float(c.correct) for c in pool.candidates]


def expected_pick(pool: TaskPool, scores: Sequence[float]) -> float:
    """The chance that the pick is correct: ties among the best are taken uniformly."""
    best = max(scores)
    tied = [c for c, s in zip(pool.candidates, scores, strict=True) if s == best]
    return sum(c.correct for c in tied) / len(tied)


def ranking(pool: TaskPool, name: str) -> list[tuple[int, float]]:
    """(candidate index, score), best first; ties keep the candidates' order."""
    scores = named(name).score(pool)
    return sorted(enumerate(scores), key=lambda item: -item[1])


def named(name: str) -> Strategy:
    """The strategy of this name; a ConfigError lists the known ones."""
    return STRATEGIES.get(name)


def needs(names: Iterable[str]) -> frozenset[Need]:
    """Everything the named strategies need gathered."""
    return frozenset(need for name in names for need in named(name).needs)


def select_pass_at_1(pools: Sequence[TaskPool], name: str) -> list[float]:
    """Per task, the expected correctness of the strategy's pick."""
    score = named(name).score
    return [expected_pick(pool, score(pool)) if pool.candidates else 0.0 for pool in pools]


@dataclass(frozen=True)
class StrategyResult:
    """One strategy on one pool of tasks, against random, first and the oracle."""

    name: str
    per_task: list[float]
    estimate: Estimate
    gain_over_random: float
    gain_over_first: float
    gap_closed: float | None
    p_vs_random: float
    p_vs_first: float


def paired_p(a: Sequence[float], b: Sequence[float]) -> float:
    """McNemar's exact test on two strategies over the same tasks. A pick made among
    ties is right with a probability, so the discordant counts are expected ones
    (task by task, P(a right, b wrong) and P(b right, a wrong)), rounded."""
    only_a = sum(x * (1 - y) for x, y in zip(a, b, strict=True))
    only_b = sum(y * (1 - x) for x, y in zip(a, b, strict=True))
    return mcnemar_exact(round(only_a), round(only_b))


REFERENCES = ("random", "first", "oracle")


def compare_strategies(pools: Sequence[TaskPool], names: Sequence[str]) -> list[StrategyResult]:
    """Every named strategy side by side on the same pools (see `compared`)."""
    if not pools:
        raise ConfigError("there are no tasks to select on")
    wanted = dict.fromkeys([*REFERENCES, *names])
    return compared({n: select_pass_at_1(pools, n) for n in wanted}, names)


def compared(values: Mapping[str, Sequence[float]], names: Sequence[str]) -> list[StrategyResult]:
    """The named strategies' per-task values (and the references') side by side, each
    with its 95% bootstrap interval over tasks, gains over random and first, the
    fraction of the random-to-oracle gap it closes and paired tests against random and
    first."""
    reference = {n: values[n] for n in REFERENCES}
    mean = {n: sum(v) / len(v) for n, v in reference.items()}
    gap = mean["oracle"] - mean["random"]
    results = []
    for name in names:
        per_task = list(values[name])
        value = sum(per_task) / len(per_task)
        results.append(
            StrategyResult(
                name=name,
                per_task=per_task,
                estimate=bootstrap(per_task),
                gain_over_random=value - mean["random"],
                gain_over_first=value - mean["first"],
                gap_closed=(value - mean["random"]) / gap if gap > 0 else None,
                p_vs_random=paired_p(per_task, reference["random"]),
                p_vs_first=paired_p(per_task, reference["first"]),
            )
        )
    return results
