"""Two runs side by side: per-task differences, flipped tasks and a paired test."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codetrial.errors import ConfigError
from codetrial.metrics import mcnemar_exact
from codetrial.records import TaskResult
from codetrial.report.document import render
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic


@dataclass(frozen=True)
class Row:
    task_id: str
    a: TaskResult
    b: TaskResult

    @property
    def change(self) -> str:
        if self.a.first.passed == self.b.first.passed:
            return ""
        return "gained" if self.b.first.passed else "lost"


@dataclass(frozen=True)
class Comparison:
    """Run A's model against run B's on the tasks both ran (first sample, first attempt)."""

    run_a: str
    run_b: str
    model_a: str
    model_b: str
    rows: list[Row]
    unsafe: bool = False

    @property
    def passed_a(self) -> int:
        return sum(r.a.first.passed for r in self.rows)

    @property
    def passed_b(self) -> int:
        return sum(r.b.first.passed for r in self.rows)

    @property
    def p_value(self) -> float:
        """Exact McNemar test of the paired difference in pass@1."""
        lost = sum(r.change == "lost" for r in self.rows)
        gained = sum(r.change == "gained" for r in self.rows)
        return mcnemar_exact(lost, gained)

    def flipped(self, change: str) -> list[str]:
        return [r.task_id for r in self.rows if r.change == change]

    def as_dict(self) -> dict[str, object]:
        """The comparison as plain data: both runs, the counts, the test, every task."""
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "model_a": self.model_a,
            "model_b": self.model_b,
            "tasks": len(self.rows),
            "passed_a": self.passed_a,
            "passed_b": self.passed_b,
            "gained": self.flipped("gained"),
            "lost": self.flipped("lost"),
            "mcnemar_exact_p": self.p_value,
            "rows": [
                {
                    "task_id": r.task_id,
                    "a": r.a.first.outcome.value,
                    "b": r.b.first.outcome.value,
                    "change": r.change,
                }
                for r in self.rows
            ],
        }


def _model(store: RunStore, other: RunStore) -> str:
    models = store.manifest.config.labels
    shared = [m for m in models if m in other.manifest.config.labels]
    if len(models) == 1 or len(shared) == 1:
        return models[0] if len(models) == 1 else shared[0]
    raise ConfigError(
        f"{store.run_dir} holds several models ({', '.join(models)}); compare runs with one "
        "model each, or with exactly one model in common"
    )


def compare(a: RunStore, b: RunStore) -> Comparison:
    model_a, model_b = _model(a, b), _model(b, a)
    first_a = {r.task_id: r for r in a.task_results() if r.model == model_a and r.sample == 0}
    first_b = {r.task_id: r for r in b.task_results() if r.model == model_b and r.sample == 0}
    common = [t for t in a.manifest.task_sha256 if t in first_a and t in first_b]
    if not common:
        raise ConfigError(f"{a.run_dir} and {b.run_dir} have no finished task in common")
    return Comparison(
        run_a=a.manifest.run_id,
        run_b=b.manifest.run_id,
        model_a=model_a,
        model_b=model_b,
        rows=[Row(t, first_a[t], first_b[t]) for t in common],
        unsafe=a.manifest.config.unsafe_host_exec or b.manifest.config.unsafe_host_exec,
    )


def write_comparison(comparison: Comparison, path: Path) -> Path:
    write_atomic(path, render("compare.html.j2", c=comparison))
    return path
