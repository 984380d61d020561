"""The seed's tables, computed from stored task results alone."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, astuple, dataclass
from typing import Any, ClassVar

from codetrial.config import Price
from codetrial.metrics import Estimate, bootstrap, ks_for, pass_at_k_table
from codetrial.records import (
    FAIL_TO_PASS,
    PASS_TO_PASS,
    AttemptRecord,
    Outcome,
    TaskResult,
    group_counts,
)


def cost(attempts: Sequence[AttemptRecord], prices: Mapping[str, Price]) -> float:
    """What `attempts`' tokens cost in dollars at their models' `prices` (model ->
    its price; a model without one costs nothing)."""
    return sum(
        prices[a.model].of(a.prompt_tokens or 0, a.completion_tokens or 0)
        for a in attempts
        if a.model in prices
    )


@dataclass(frozen=True)
class Integrity:
    """What a person must know of a model's attempts besides its score: runs whose
    tests or channel showed interference (`tampered`), candidates the static scan
    found at least one reach into the test machinery in (`suspect`, see
    `codetrial.gate.scan`), replies stopped at a token limit, --max-tokens or the
    context window (`cut_off`), prompts that could not fit the context window at all
    (`overflow`), and every attempt's tokens at the model's price in dollars (0
    unpriced)."""

    HEADERS: ClassVar[tuple[str, ...]] = ("tampered", "suspect", "cut off", "overflow", "cost $")

    tampered: int
    suspect: int
    cut_off: int
    overflow: int
    cost_usd: float

    @classmethod
    def of(cls, attempts: Sequence[AttemptRecord], prices: Mapping[str, Price]) -> Integrity:
        """The counts over `attempts`, their tokens at `prices` (model -> its price)."""
        return cls(
            tampered=sum(a.outcome is Outcome.TAMPERED for a in attempts),
            suspect=sum(bool(a.suspects) for a in attempts),
            cut_off=sum(a.cut_off for a in attempts),
            overflow=sum(a.outcome is Outcome.OVERFLOW for a in attempts),
            cost_usd=cost(attempts, prices),
        )

    @classmethod
    def pooled(cls, parts: Iterable[Integrity]) -> Integrity:
        """The counts of several runs' attempts taken together."""
        return cls(*(sum(column) for column in zip(*map(astuple, parts), strict=True)))

    def cells(self) -> tuple[str, ...]:
        """The counts as a table shows them under HEADERS."""
        return (
            str(self.tampered),
            str(self.suspect),
            str(self.cut_off),
            str(self.overflow),
            f"{self.cost_usd:.4f}",
        )


@dataclass(frozen=True)
class ModelSummary:
    """One row of the results table; first-attempt and repaired figures kept apart,
    over each task's first sample. `integrity` counts attempts of every sample."""

    model: str
    tasks: int
    first_pass: int
    after_repair: int
    repair_successes: int
    repair_tries: int
    gate_rejects: int
    infra_errors: int
    integrity: Integrity

    def as_dict(self) -> dict[str, int | str | float]:
        figures = asdict(self)
        integrity = figures.pop("integrity")
        return {**figures, **integrity}


def summarize(
    results: Sequence[TaskResult], models: Sequence[str], prices: Mapping[str, Price] = {}
) -> list[ModelSummary]:
    """The seed's table, over each task's first sample (the greedy one at temperature 0)."""
    rows = []
    for model in models:
        mine = [r for r in results if r.model == model and r.sample == 0]
        attempts = [a for r in mine for a in r.attempts]
        repaired = [r for r in mine if r.repairs]
        every = [a for r in results if r.model == model for a in r.attempts]
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
                integrity=Integrity.of(every, prices),
            )
        )
    return rows


@dataclass(frozen=True)
class SuspectLine:
    """One finding of the static scan, with the attempt it was found in; `model` is
    what that attempt's results are shown under (see `labelled`)."""

    model: str
    task_id: str
    sample: int
    attempt: int
    path: str
    line: int
    rule: str
    message: str
    text: str

    def as_dict(self) -> dict[str, int | str]:
        return asdict(self)


def suspect_lines(results: Sequence[TaskResult]) -> list[SuspectLine]:
    """Every finding of the static scan in the stored attempts, attempt by attempt."""
    return [
        SuspectLine(r.model, a.task_id, a.sample, a.attempt, **s.model_dump())
        for r in results
        for a in r.attempts
        for s in a.suspects
    ]


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

        return {
            "model": self.model,
            "samples": self.samples,
            "first": table(self.first),
            "after_repair": table(self.after_repair),
        }


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


@dataclass(frozen=True)
class MonthPass:
    """pass@1 of one model on the problems released in one month (YYYY-MM), first
    attempts and after repair, each with its bootstrap interval over those problems:
    a score that falls for problems released after a model was trained is the sign
    of contamination."""

    model: str
    month: str
    first: Estimate | None
    after_repair: Estimate | None

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "month": self.month,
            "first": self.first.as_dict() if self.first else "not available",
            "after_repair": self.after_repair.as_dict() if self.after_repair else "not available",
        }


def by_release_month(
    results: Sequence[TaskResult], models: Sequence[str], released: Mapping[str, str]
) -> list[MonthPass]:
    """pass@1 per model and month of release (`released`: task id -> ISO date), for
    the tasks that carry a date."""
    months: dict[str, list[str]] = {}
    for task_id, day in sorted(released.items(), key=lambda item: item[1]):
        months.setdefault(day[:7], []).append(task_id)
    return [
        MonthPass(row.model, month, row.first[1], row.after_repair[1])
        for month, task_ids in months.items()
        for row in pass_at_k_rows(results, models, task_ids)
    ]


@dataclass(frozen=True)
class EditSummary:
    """aider's leaderboard columns for one model's edited tasks (each task's first
    sample): the pass rate after each try, with a 95% bootstrap interval over tasks;
    cases none of whose responses was a malformed edit; malformed responses; tries
    whose files did not compile, as a SyntaxError or as an IndentationError (TabError
    among them); test runs stopped by the timeout; generation seconds and tokens,
    summed over tries."""

    model: str
    edit_format: str
    cases: int
    pass_after_try: list[Estimate]
    well_formed_cases: int
    malformed_edits: int
    syntax_errors: int
    indentation_errors: int
    timeouts: int
    generation_s: float
    prompt_tokens: int
    completion_tokens: int
    total_cost: float  # dollars, at the model's price (aider's `total_cost`)

    @property
    def well_formed(self) -> float:
        return self.well_formed_cases / self.cases

    @property
    def seconds_per_case(self) -> float:
        return self.generation_s / self.cases

    @property
    def cost_per_case(self) -> float:
        return self.total_cost / self.cases

    def as_dict(self) -> dict[str, object]:
        figures = asdict(self)
        figures["pass_after_try"] = [e.as_dict() for e in self.pass_after_try]
        return {
            **figures,
            "well_formed": self.well_formed,
            "seconds_per_case": self.seconds_per_case,
            "cost_per_case": self.cost_per_case,
        }


def _syntax(attempt: AttemptRecord, *names: str) -> bool:
    return attempt.outcome is Outcome.SYNTAX_ERROR and attempt.detail.startswith(
        tuple(f"{name}:" for name in names)
    )


def edit_summaries(
    results: Sequence[TaskResult],
    models: Sequence[str],
    edited_ids: set[str],
    edit_format: str,
    tries: int,
    prices: Mapping[str, Price] = {},
) -> list[EditSummary]:
    """One EditSummary per model that answered tasks in an edit format (`edited_ids`:
    workspace tasks, and repository tasks a model was asked to fix)."""
    rows = []
    for model in models:
        mine = [
            r for r in results if r.model == model and r.sample == 0 and r.task_id in edited_ids
        ]
        if not mine:
            continue
        chains = [r.attempts for r in mine]
        attempts = [a for chain in chains for a in chain]
        rows.append(
            EditSummary(
                model=model,
                edit_format=edit_format,
                cases=len(mine),
                pass_after_try=[
                    bootstrap([any(a.passed for a in chain[:n]) for chain in chains])
                    for n in range(1, tries + 1)
                ],
                well_formed_cases=sum(
                    all(a.outcome is not Outcome.MALFORMED_EDIT for a in chain) for chain in chains
                ),
                malformed_edits=sum(a.outcome is Outcome.MALFORMED_EDIT for a in attempts),
                syntax_errors=sum(_syntax(a, "SyntaxError") for a in attempts),
                indentation_errors=sum(
                    _syntax(a, "IndentationError", "TabError") for a in attempts
                ),
                timeouts=sum(a.outcome is Outcome.TIMEOUT for a in attempts),
                generation_s=sum(a.generation_s for a in attempts),
                prompt_tokens=sum(a.prompt_tokens or 0 for a in attempts),
                completion_tokens=sum(a.completion_tokens or 0 for a in attempts),
                total_cost=cost(attempts, prices),
            )
        )
    return rows


@dataclass(frozen=True)
class RepositoryInstance:
    """One instance's result as SWE-bench reports it (a model's final attempt on it)."""

    model: str
    task_id: str
    resolved: bool
    outcome: str
    patch_applied: bool
    empty_patch: bool
    fail_to_pass: tuple[int, int]
    pass_to_pass: tuple[int, int]
    patch_s: float
    tests_s: float


@dataclass(frozen=True)
class RepositorySummary:
    """SWE-bench's report for one model: instances in the suite, submitted (given a
    patch), completed (their tests ran), resolved and unresolved among the completed,
    empty patches, and errors (a patch that applies nowhere, a limit or a fault that
    kept the tests from finishing); resolved over all instances, with a 95% bootstrap
    interval."""

    model: str
    total: int
    submitted: int
    completed: int
    resolved: int
    unresolved: int
    empty_patch: int
    error: int
    resolved_rate: Estimate
    instances: list[RepositoryInstance]

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "resolved_rate": self.resolved_rate.as_dict()}


_COMPLETED = (Outcome.PASSED, Outcome.FAILED, Outcome.TAMPERED)  # the tests ran


def _instance(result: TaskResult) -> RepositoryInstance:
    final = result.final
    counts = group_counts(final.tests)
    return RepositoryInstance(
        model=result.model,
        task_id=result.task_id,
        resolved=final.passed,
        outcome=final.outcome.value,
        patch_applied=final.outcome in _COMPLETED,
        empty_patch=final.outcome is Outcome.NO_CODE,
        fail_to_pass=counts[FAIL_TO_PASS],
        pass_to_pass=counts[PASS_TO_PASS],
        patch_s=final.phases.get("patch", 0.0),
        tests_s=final.phases.get("tests", 0.0),
    )


def repository_summaries(
    results: Sequence[TaskResult], models: Sequence[str], repository_ids: Sequence[str]
) -> list[RepositorySummary]:
    """One RepositorySummary per model, over the suite's repository instances."""
    if not repository_ids:
        return []
    rows = []
    for model in models:
        mine = {r.task_id: _instance(r) for r in results if r.model == model and r.sample == 0}
        instances = [mine[i] for i in repository_ids if i in mine]
        completed = [i for i in instances if i.patch_applied]
        resolved = sum(i.resolved for i in instances)
        rows.append(
            RepositorySummary(
                model=model,
                total=len(repository_ids),
                submitted=len(instances),
                completed=len(completed),
                resolved=resolved,
                unresolved=len(completed) - resolved,
                empty_patch=sum(i.empty_patch for i in instances),
                error=sum(not i.patch_applied and not i.empty_patch for i in instances),
                resolved_rate=bootstrap([i in mine and mine[i].resolved for i in repository_ids]),
                instances=instances,
            )
        )
    return rows


def _median_worst(values: Sequence[float | None]) -> list[float | None]:
    """[median, worst] of the known values, or [None, None]."""
    known = [v for v in values if v is not None]
    return [round(statistics.median(known), 3), max(known)] if known else [None, None]


@dataclass(frozen=True)
class EfficiencySummary:
    """Passing candidates against their tasks' references (see efficiency.json): the
    median and worst ratios of CPU time and peak memory, on the tests and on heavy
    inputs, and how many are flagged slow. For one model over all its tasks
    (`task_id` ""), with `tasks` holding the same per task."""

    model: str
    task_id: str
    candidates: int
    tests_cpu: list[float | None]
    tests_peak: list[float | None]
    heavy_timed: int
    heavy_cpu: list[float | None]
    heavy_peak: list[float | None]
    over_cap: int
    disagree: int
    unmeasured: int  # on the tests or the heavy input: a repeat failed, a limit or a fault
    slow: int
    tasks: tuple[EfficiencySummary, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tasks": [t.as_dict() for t in self.tasks]}


def _efficiency_row(model: str, task_id: str, rows: list[dict[str, Any]]) -> EfficiencySummary:
    tests = [r["tests"] for r in rows if r["tests"]]
    heavy = [r["heavy"] for r in rows if r["heavy"]]
    return EfficiencySummary(
        model=model,
        task_id=task_id,
        candidates=len(rows),
        tests_cpu=_median_worst([t["cpu_ratio"] for t in tests]),
        tests_peak=_median_worst([t["peak_ratio"] for t in tests]),
        heavy_timed=sum(h["cpu_ratio"] is not None for h in heavy),
        heavy_cpu=_median_worst([h["cpu_ratio"] for h in heavy]),
        heavy_peak=_median_worst([h["peak_ratio"] for h in heavy]),
        over_cap=sum(bool(h["over_cap"]) for h in heavy),
        disagree=sum(h["agrees"] is False for h in heavy),
        unmeasured=sum(
            any(p and "unmeasured" in p for p in (r["tests"], r["heavy"])) for r in rows
        ),
        slow=sum(bool(r["slow"]) for r in rows),
    )


def efficiency_summaries(
    document: dict[str, Any], models: Sequence[str]
) -> list[EfficiencySummary]:
    """One EfficiencySummary per model with measured candidates."""
    summaries = []
    for model in models:
        mine = [c for c in document.get("candidates", []) if c["model"] == model]
        if not mine:
            continue
        task_ids = sorted({c["task_id"] for c in mine})
        per_task = tuple(
            _efficiency_row(model, t, [c for c in mine if c["task_id"] == t]) for t in task_ids
        )
        summaries.append(dataclasses.replace(_efficiency_row(model, "", mine), tasks=per_task))
    return summaries
