"""Figures of a question run: accuracy per model and mode, the paired test between
modes, what the fix rounds gained, and each chain of rounds with its charts."""

from __future__ import annotations

import base64
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codetrial.metrics import Estimate, bootstrap, mcnemar_exact
from codetrial.records import Outcome, TaskResult
from codetrial.store.artifacts import outputs_dir

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
}
IMAGE_CAP = 2 * 1024 * 1024


@dataclass(frozen=True)
class ModeRow:
    """One model in one mode: right answers of the scored questions, with the CI;
    the mean tokens and seconds spent per question; how many chains' first program
    failed (did not run to an exit of 0)."""

    label: str
    correct: int
    scored: int
    accuracy: Estimate | None
    tokens: float
    seconds: float
    failed_first: int

    def as_dict(self) -> dict[str, object]:
        return {
            "label": self.label,
            "correct": self.correct,
            "scored": self.scored,
            "accuracy": self.accuracy.as_dict() if self.accuracy else None,
            "tokens_per_question": self.tokens,
            "seconds_per_question": self.seconds,
            "failed_first": self.failed_first,
        }


@dataclass(frozen=True)
class ModePair:
    """Two labels on the questions both answered: right only in `a`, only in `b`."""

    a: str
    b: str
    only_a: int
    only_b: int

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_a, self.only_b)

    def as_dict(self) -> dict[str, object]:
        return {
            "a": self.a,
            "b": self.b,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "mcnemar_exact_p": self.p_value,
        }


def _scored(results: Sequence[TaskResult], label: str) -> dict[str, bool]:
    mine = [r for r in results if r.model == label and r.sample == 0]
    return {r.task_id: r.final.passed for r in mine if r.final.outcome is not Outcome.ANSWERED}


def mode_rows(results: Sequence[TaskResult], labels: Sequence[str]) -> list[ModeRow]:
    rows = []
    for label in labels:
        mine = [r for r in results if r.model == label]
        if not mine:
            continue
        scored = _scored(results, label)
        attempts = [a for r in mine for a in r.attempts]
        tokens = sum((a.prompt_tokens or 0) + (a.completion_tokens or 0) for a in attempts)
        seconds = sum(a.generation_s + a.execution_s for a in attempts)
        rows.append(
            ModeRow(
                label=label,
                correct=sum(scored.values()),
                scored=len(scored),
                accuracy=bootstrap([float(v) for v in scored.values()]) if scored else None,
                tokens=tokens / len(mine),
                seconds=seconds / len(mine),
                failed_first=sum(
                    1 for r in mine if r.first.program and r.first.program.failed is not None
                ),
            )
        )
    return rows


def mode_pairs(results: Sequence[TaskResult], labels: Sequence[str]) -> list[ModePair]:
    pairs = []
    for a, b in itertools.combinations(labels, 2):
        first, second = _scored(results, a), _scored(results, b)
        shared = first.keys() & second.keys()
        if shared:
            pairs.append(
                ModePair(
                    a,
                    b,
                    sum(first[t] and not second[t] for t in shared),
                    sum(second[t] and not first[t] for t in shared),
                )
            )
    return pairs


@dataclass(frozen=True)
class FixGain:
    """Questions the fix mode answered right and the once mode did not, and how many
    of those began with a program that failed (and so were fixed)."""

    model: str
    gained: int
    lost: int
    from_failed: int

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "gained": self.gained,
            "lost": self.lost,
            "from_failed_programs": self.from_failed,
        }


def fix_gains(
    results: Sequence[TaskResult], models: Sequence[str], label: dict[tuple[str, str], str]
) -> list[FixGain]:
    """For each model run in both the once and the fix mode; `label` maps (model,
    mode) to the label its answers are stored under."""
    gains = []
    for model in models:
        once, fix = label.get((model, "once")), label.get((model, "fix"))
        if once is None or fix is None:
            continue
        before, after = _scored(results, once), _scored(results, fix)
        chains = {r.task_id: r for r in results if r.model == fix and r.sample == 0}
        gained = [t for t in after.keys() & before.keys() if after[t] and not before[t]]
        lost = sum(1 for t in after.keys() & before.keys() if before[t] and not after[t])
        gains.append(FixGain(model, len(gained), lost, sum(1 for t in gained if chains[t].repairs)))
    return gains


def images(run_dir: Path, result: TaskResult) -> dict[int, list[tuple[str, str]]]:
    """Each round's images (attempt -> [(name, data URI)]), as its program wrote them."""
    found: dict[int, list[tuple[str, str]]] = {}
    for attempt in result.attempts:
        folder = outputs_dir(run_dir, result.model, result.task_id, attempt.attempt, result.sample)
        for name in attempt.program.files if attempt.program else ():
            kind = IMAGE_TYPES.get(Path(name).suffix.lower())
            path = folder / name
            if kind and path.is_file() and path.stat().st_size <= IMAGE_CAP:
                data = base64.b64encode(path.read_bytes()).decode()
                found.setdefault(attempt.attempt, []).append((name, f"data:{kind};base64,{data}"))
    return found
