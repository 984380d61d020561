"""The seed's tables, computed from stored task results alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from codetrial.metrics import Estimate, ks_for, pass_at_k_table
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
    """The seed's table, over each task's first sample (the greedy one at temperature 0)."""
    rows = []
    for model in models:
        mine = [r for r in results if r.model == model and r.sample == 0]
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
    """Rows of (task id, the first sample's TaskResult or None, per model)."""
    by_key = {(r.task_id, r.model): r for r in results if r.sample == 0}
    return [(task_id, [by_key.get((task_id, m)) for m in models]) for task_id in task_ids]


@dataclass(frozen=True)
class PassAtK:
    """pass@k for one model, first attempts and after repair kept apart."""

    model: str
    samples: int
    first: dict[int, Estimate | None]
    after_repair: dict[int, Estimate | None]

    def as_dict(self) -> dict[str, object]:
        def table(values: dict[int, Estimate | None]) -> dict[str, object]:
            return {f"pass@{k}": v.as_dict() if v else "not available" for k, v in values.items()}

        return {"model": self.model, "samples": self.samples,
                "first": table(self.first), "after_repair": table(self.after_repair)}  # fmt: skip


def pass_at_k_rows(
    results: Sequence[TaskResult], models: Sequence[str], task_ids: Sequence[str]
) -> list[PassAtK]:
    """pass@k with bootstrap intervals over tasks, per model; tasks without results
    are left out of the estimate rather than counted as failures."""
    rows = []
    for model in models:
        first: dict[str, list[int]] = {}
        final: dict[str, list[int]] = {}
        for r in results:
            if r.model == model:
                first.setdefault(r.task_id, []).append(int(r.first.passed))
                final.setdefault(r.task_id, []).append(int(r.passed_after_repair))
        present = [t for t in task_ids if t in first]
        if not present:
            continue
        samples = max(len(first[t]) for t in present)
        ks = ks_for(samples)
        rows.append(
            PassAtK(
                model=model,
                samples=samples,
                first=pass_at_k_table([(len(first[t]), sum(first[t])) for t in present], ks),
                after_repair=pass_at_k_table([(len(final[t]), sum(final[t])) for t in present], ks),
            )
        )
    return rows
