"""A stored run as Python sees it: `open_run(path)` gives a `Run`, and so does every
function of the API that makes one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codetrial.metrics import Estimate
from codetrial.records import AttemptRecord, TaskResult, TestOutcome
from codetrial.report import Figures, figures, results_document, write_reports
from codetrial.store import RunStore
from codetrial.store.manifest import Manifest


class Run:
    """A run directory: its manifest, its results as typed records or as a plain
    table, pass@k with confidence intervals, and its report. The store is opened for
    each question and closed again, so a Run holds no file open.

    >>> run = open_run("runs/20260101-120000-contracts10")   # doctest: +SKIP
    >>> run.pass_at_k()["embedded"][1]                        # doctest: +SKIP
    Estimate(value=0.4, low=0.1, high=0.7, tasks=10)
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        with RunStore.open(self.path) as store:
            self.manifest: Manifest = store.manifest
        self._figures: Figures | None = None

    def __repr__(self) -> str:
        config = self.manifest.config
        return f"Run({str(self.path)!r}, suite={config.suite!r}, models={config.models!r})"

    @property
    def models(self) -> list[str]:
        return self.manifest.config.labels

    def figures(self) -> Figures:
        """What the report and the console tables show, computed once per Run."""
        if self._figures is None:
            with RunStore.open(self.path) as store:
                return self._figures_of(store)
        return self._figures

    def _figures_of(self, store: RunStore) -> Figures:
        """The figures, computed from the open `store` when they are not yet."""
        if self._figures is None:
            self._figures = figures(store)
        return self._figures

    def results(self) -> list[TaskResult]:
        """One TaskResult per (model, task, sample): its first attempt and repairs."""
        return self.figures().results

    def attempts(self, model: str | None = None) -> list[AttemptRecord]:
        """Every stored attempt (of one model), with its code, verdict and tests."""
        with RunStore.open(self.path) as store:
            return store.attempts(model)

    def table(self) -> list[dict[str, Any]]:
        """The results as plain rows, one per (model, task, sample), ready for a CSV
        writer or a data frame."""
        return [
            {
                "model": r.model,
                "task_id": r.task_id,
                "sample": r.sample,
                "outcome": r.first.outcome.value,
                "passed": r.first.passed,
                "outcome_after_repair": r.final.outcome.value,
                "passed_after_repair": r.passed_after_repair,
                "attempts": len(r.attempts),
                "tests_passed": sum(t.outcome is TestOutcome.PASSED for t in r.first.tests),
                "tests": len(r.first.tests),
            }
            for r in self.results()
        ]

    def pass_at_k(self, after_repair: bool = False) -> dict[str, dict[int, Estimate | None]]:
        """model -> k -> pass@k with its 95% bootstrap interval over tasks (None where
        some task has fewer than k samples), first attempts unless `after_repair`."""
        rows = self.figures().pass_at_k
        return {r.model: r.after_repair if after_repair else r.first for r in rows}

    def as_dict(self) -> dict[str, Any]:
        """The document results.json holds (the manifest, the summary, every attempt)."""
        with RunStore.open(self.path) as store:
            return results_document(store, self._figures_of(store))

    def report(self) -> Path:
        """Write results.json and report.html from the store as it is now (the figures
        are computed again); the report's path."""
        self._figures = None
        with RunStore.open(self.path) as store:
            return write_reports(store, self._figures_of(store))


def open_run(path: Path | str) -> Run:
    """A run that `codetrial run`, `evaluate` or the API stored; a StoreError says what
    to do when `path` is not a readable run directory."""
    return Run(path)
