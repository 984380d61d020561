"""A small model as judge: its probability that a candidate is correct, and how far
that can be trusted, measured against the test verdicts.

The judge abstains when its confidence, max(p, 1 - p), is below a threshold;
otherwise it says "correct" when p >= 0.5. At each threshold the figures cover the
candidates it did not abstain on. Apart from any threshold, the ROC AUC says how
well its probabilities order correct candidates above wrong ones, and the same
figure within a task how well they order a task's candidates, which is what a
selector picking the likeliest of them uses: a judge that has only learned which
tasks are easy orders candidates across tasks, and within a task no better than
chance.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codetrial.models import Backend
from codetrial.models.base import ReadsStates
from codetrial.prompts import judge_messages
from codetrial.records import GenerationOptions
from codetrial.selection.evidence import Entry, Keeper, cache_key
from codetrial.store.artifacts import read_json, write_atomic

THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
CALIBRATION_BINS = 10


def judge_entries(
    backend: Backend,
    entries: Sequence[Entry],
    options: GenerationOptions,
    *,
    shots: int,
    cache: Path,
    progress: Callable[[int], None] = lambda done: None,
    computed: Callable[[int], None] = lambda items: None,
) -> dict[tuple[str, str], float]:
    """(task id, code) -> P(yes) for every candidate with code; identical code is
    judged once. A backend that reads prompts in parts is shown where they fall. Kept
    in `cache` (JSON) and reused; `computed` is told how many were asked as they are
    kept."""
    known = read_json(cache, dict)
    parts = isinstance(backend, ReadsStates)
    keeper = Keeper(lambda: write_atomic(cache, json.dumps(known)), computed)
    for done, entry in enumerate(entries, 1):
        code = entry.record.code
        key = cache_key((entry.task.id, code or ""))
        if code is not None and key not in known:
            messages = judge_messages(entry.task, code, shots, parts=parts)
            known[key] = backend.yes_probability(messages, options)
            keeper.one()
        progress(done)
    keeper.close()
    return {
        (e.task.id, e.record.code): float(known[cache_key((e.task.id, e.record.code))])
        for e in entries
        if e.record.code is not None
    }


@dataclass(frozen=True)
class Quality:
    """The judge against the tests at one confidence threshold."""

    threshold: float
    judged: int
    abstained: float
    kappa: float | None
    false_positive_rate: float | None
    false_negative_rate: float | None
    precision_correct: float | None
    precision_wrong: float | None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def quality(pairs: Sequence[tuple[float, bool]], threshold: float) -> Quality:
    """`pairs`: (P(yes), the tests' verdict) per candidate."""
    decided = [(p >= 0.5, truth) for p, truth in pairs if max(p, 1 - p) >= threshold]
    n = len(decided)
    tp = sum(said and truth for said, truth in decided)
    fp = sum(said and not truth for said, truth in decided)
    fn = sum(not said and truth for said, truth in decided)
    tn = n - tp - fp - fn
    kappa = None
    if n:
        observed = (tp + tn) / n
        expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
        kappa = (observed - expected) / (1 - expected) if expected < 1 else None
    return Quality(
        threshold=threshold,
        judged=n,
        abstained=1 - n / len(pairs) if pairs else 0.0,
        kappa=kappa,
        false_positive_rate=_ratio(fp, fp + tn),
        false_negative_rate=_ratio(fn, fn + tp),
        precision_correct=_ratio(tp, tp + fp),
        precision_wrong=_ratio(tn, tn + fn),
    )


def _ordered(pairs: Sequence[tuple[float, bool]]) -> tuple[float, int]:
    """How many (correct, wrong) pairs of candidates have the correct one's P(yes) the
    higher (a tie counts half), and how many such pairs there are."""
    wrong = np.sort([p for p, truth in pairs if not truth])
    right = [p for p, truth in pairs if truth]
    below = np.searchsorted(wrong, right, side="left")
    tied = np.searchsorted(wrong, right, side="right") - below
    return float((below + tied / 2).sum()), len(right) * wrong.size


def auc(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """The chance that a correct candidate gets a higher P(yes) than a wrong one (a tie
    counts half): the area under the ROC curve. None without both kinds."""
    ordered, compared = _ordered(pairs)
    return ordered / compared if compared else None


def task_auc(by_task: Iterable[Sequence[tuple[float, bool]]]) -> float | None:
    """The same chance for a correct and a wrong candidate of one task, pooled over the
    pairs of every task that has both kinds. None when no task has both."""
    counted = [_ordered(pairs) for pairs in by_task]
    compared = sum(n for _, n in counted)
    return sum(ordered for ordered, _ in counted) / compared if compared else None


@dataclass(frozen=True)
class CalibrationBin:
    low: float
    high: float
    count: int
    mean_confidence: float | None
    correct_share: float | None


def calibration(pairs: Sequence[tuple[float, bool]]) -> list[CalibrationBin]:
    """Reliability: candidates binned by P(yes), each bin's share actually correct."""
    bins = []
    for index in range(CALIBRATION_BINS):
        low, high = index / CALIBRATION_BINS, (index + 1) / CALIBRATION_BINS
        inside = [(p, t) for p, t in pairs if low <= p < high or (high == 1.0 and p == 1.0)]
        bins.append(
            CalibrationBin(
                low,
                high,
                len(inside),
                sum(p for p, _ in inside) / len(inside) if inside else None,
                sum(t for _, t in inside) / len(inside) if inside else None,
            )
        )
    return bins
