"""The seed's tables, computed from stored task results alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from codetrial.records import Outcome, TaskResult


@dataclass(frozen=True)
class ModelSummary:
    """One row of the results table; first-attempt and repaired figures kept apart."""

    model: str
    tasks: int
    first_pass: int
    after_repair: int
    repair_successes: int
    repair_tries: int
    gate_rejects: int
    infra_errors: int

    def as_dict(self) -> dict[str, int | str]:
        return asdict(self)


def summarize(results: Sequence[TaskResult], models: Sequence[str]) -> list[ModelSummary]:
    rows = []
    for model in models:
        mine = [r for r in results if r.model == model]
        attempts = [a for r in mine for a in (r.first, *r.repairs)]
        repaired = [r for r in mine if r.repairs]
        rows.append(
            ModelSummary(
                model=model,
                tasks=len(mine),
                first_pass=sum(r.first.passed for r in mine),
                after_repair=sum(r.passed_after_repair for r in mine),
                repair_successes=sum(r.final.passed for r in repaired),
                repair_tries=len(repaired),
                gate_rejects=sum(a.outcome is Outcome.REJECTED for a in attempts),
                infra_errors=sum(a.outcome is Outcome.INFRA_ERROR for a in attempts),
            )
        )
    return rows


def cell(result: TaskResult) -> str:
    """A matrix cell: the first outcome, and what repair made of it when it ran."""
    first = "pass" if result.first.passed else result.first.outcome.value
    if not result.repairs:
        return first
    final = "pass" if result.final.passed else result.final.outcome.value
    return f"{first} → {final}"


def matrix(
    results: Sequence[TaskResult], models: Sequence[str], task_ids: Sequence[str]
) -> list[tuple[str, list[TaskResult | None]]]:
    """Rows of (task id, one TaskResult or None per model)."""
    by_key = {(r.task_id, r.model): r for r in results}
    return [(task_id, [by_key.get((task_id, m)) for m in models]) for task_id in task_ids]
