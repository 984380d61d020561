"""Pools out of a run: each task's first attempts, in sample order, with the evidence
the strategies read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from codetrial.errors import ConfigError
from codetrial.kinds import stored_tasks
from codetrial.kinds.function import FUNCTION
from codetrial.selection.evidence import Entry, Execution
from codetrial.selection.learned import Signals
from codetrial.selection.strategies import PoolCandidate, TaskPool
from codetrial.store import RunStore
from codetrial.tasks import Task


def chosen_tasks(store: RunStore, command: str, task_ids: Collection[str] = ()) -> list[Task]:
    """The run's function tasks, only those of `task_ids` when given; a ConfigError
    names any the run does not have."""
    stored = stored_tasks(store.manifest.config, store.manifest.task_sha256, store.run_dir)
    tasks = list(stored.only(FUNCTION, command))
    if not task_ids:
        return tasks
    unknown = sorted(set(task_ids) - {t.id for t in tasks})
    if unknown:
        raise ConfigError(
            f"{store.run_dir} has no task {', '.join(unknown)}; `codetrial report "
            f"{store.run_dir}` lists its tasks"
        )
    return [t for t in tasks if t.id in task_ids]


def entries(store: RunStore, tasks: Sequence[Task], model: str) -> dict[str, list[Entry]]:
    """Task id -> its candidates' first attempts, in sample order."""
    by_id = {t.id: t for t in tasks}
    found: dict[str, list[Entry]] = {t.id: [] for t in tasks}
    for record in store.attempts(model):
        if record.attempt == 0 and record.task_id in by_id:
            found[record.task_id].append(Entry(by_id[record.task_id], record))
    return {task_id: items for task_id, items in found.items() if items}


def build(
    by_task: Mapping[str, Sequence[Entry]],
    tests: Mapping[str, Sequence[str]],
    executions: Mapping[tuple[str, str], Execution],
    judged: Mapping[tuple[str, str], float],
    *,
    void: Collection[str] = (),
    trained: Mapping[tuple[str, str], float] | None = None,
) -> tuple[list[TaskPool], list[list[Signals]]]:
    """One TaskPool per task (and the ranker's extra signals, in the same order), with
    the judge's and the trained judge's probabilities by (task id, code). In the tasks
    named in `void` no candidate counts as passing a generated test."""
    pools, signals = [], []
    for task_id, items in by_task.items():
        candidates, extra = [], []
        for entry in items:
            code = entry.record.code
            execution = executions.get((task_id, code or ""))
            candidates.append(
                PoolCandidate(
                    correct=entry.record.passed,
                    code=code,
                    passed_tests=frozenset(
                        execution.passed_tests if execution and task_id not in void else ()
                    ),
                    mean_logprob=entry.record.mean_logprob,
                    visible_passed=entry.visible_passed,
                    outputs=execution.outputs if execution else None,
                    judge_yes=judged.get((task_id, code or "")),
                    trained_yes=(trained or {}).get((task_id, code or "")),
                )
            )
            extra.append(Signals(entry.visible_outcome, entry.visible_error, entry.visible_total))
        pools.append(TaskPool(task_id, candidates, dict(Counter(tests.get(task_id, [])))))
        signals.append(extra)
    return pools, signals
