"""Selection from k of a task's candidates, measured the way the small-judge paper
measures it: for each k, `repeats` random subsets of k candidates per task (seeded),
every strategy picks within each subset, and a task's value is its mean over the
subsets. Scores learned across tasks (the ranker's, the trained judge's) are computed
once on the whole pool; codet, consensus and the others see only the subset.

An arm can be set against another run's single attempt (a bigger model, say): that
run's first-attempt pass rate per task, with a paired test on the same tasks, and
what each side costs to generate. A strategy's own cost comes on top: what its
evidence cost a task here (costs.py), for the tests written once a task, and k times
what a candidate's judging or test run cost. Training a ranker or a judge is not
counted: it is done once, before selection.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codetrial.errors import ConfigError
from codetrial.metrics import Estimate, bootstrap
from codetrial.selection.costs import Cost, Overhead
from codetrial.selection.evidence import Entry
from codetrial.selection.pools import chosen_tasks, entries
from codetrial.selection.strategies import (
    REFERENCES,
    StrategyResult,
    TaskPool,
    compared,
    named,
    paired_p,
)
from codetrial.selection.strategies import select_pass_at_1 as picked
from codetrial.store import RunStore

SEED = 0


def cost(candidates: Sequence[Entry]) -> Cost:
    """Mean completion tokens and generation seconds of one attempt, over tasks."""
    by_task: dict[str, list[Entry]] = {}
    for e in candidates:
        by_task.setdefault(e.task.id, []).append(e)
    tokens = [
        statistics.mean(e.record.completion_tokens or 0 for e in items)
        for items in by_task.values()
    ]
    seconds = [statistics.mean(e.record.generation_s for e in items) for items in by_task.values()]
    return Cost(statistics.mean(tokens or [0.0]), statistics.mean(seconds or [0.0]))


@dataclass(frozen=True)
class Baseline:
    """Another run's single attempt: per task, the share of its samples' first
    attempts that passed (pass@1), and what an attempt costs."""

    label: str
    per_task: dict[str, float]
    estimate: Estimate
    cost: Cost


def baseline(store: RunStore, task_ids: Sequence[str] = ()) -> Baseline:
    """The run's single attempt, on the tasks `task_ids` (all when empty)."""
    (model, *others) = store.manifest.config.models
    if others:
        raise ConfigError(f"{store.run_dir} has several models; a baseline run has one")
    by_task = entries(store, chosen_tasks(store, "codetrial select --against", task_ids), model)
    per_task = {
        task: sum(e.record.passed for e in items) / len(items) for task, items in by_task.items()
    }
    first = [e for items in by_task.values() for e in items]
    label = f"{model} in {store.run_dir.name}"
    return Baseline(label, per_task, bootstrap(list(per_task.values())), cost(first))


@dataclass(frozen=True)
class Arm:
    """The strategies choosing among `size` candidates per task, `repeats` times; the
    gain over the baseline and a paired test against it, by strategy; what `size`
    candidates cost to generate, and what each strategy's evidence costs on top, a
    task (None: not measured here)."""

    size: int
    repeats: int
    results: list[StrategyResult]
    vs_baseline: dict[str, tuple[float, float]]
    cost: Cost
    selection: dict[str, Cost | None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "repeats": self.repeats,
            "cost": dataclasses.asdict(self.cost),
            "strategies": [
                {
                    "name": r.name,
                    "estimate": r.estimate.as_dict(),
                    "gain_over_random": r.gain_over_random,
                    "p_vs_random": r.p_vs_random,
                    "selection_cost": _plain(self.selection[r.name]),
                    **(
                        {
                            "gain_over_baseline": self.vs_baseline[r.name][0],
                            "p_vs_baseline": self.vs_baseline[r.name][1],
                        }
                        if r.name in self.vs_baseline
                        else {}
                    ),
                }
                for r in self.results
            ],
        }


def _plain(cost: Cost | None) -> dict[str, float] | None:
    return None if cost is None else dataclasses.asdict(cost)


def subset(pools: Sequence[TaskPool], size: int, rng: random.Random) -> list[TaskPool]:
    """Each task's pool cut to `size` of its candidates drawn without replacement, in
    the order drawn (all of them, shuffled, when it has fewer)."""
    return [
        dataclasses.replace(
            p, candidates=rng.sample(list(p.candidates), min(size, len(p.candidates)))
        )
        for p in pools
    ]


def arms(
    pools: Sequence[TaskPool],
    names: Sequence[str],
    *,
    sizes: Sequence[int],
    repeats: int,
    generation: Cost,
    overhead: Overhead,
    against: Baseline | None = None,
) -> list[Arm]:
    """One Arm per size; the subsets are drawn from a generator seeded with SEED, so
    the same pools give the same subsets."""
    if not pools:
        raise ConfigError("there are no tasks to select on")
    if against is not None:
        missing = [p.task_id for p in pools if p.task_id not in against.per_task]
        if missing:
            raise ConfigError(
                f"the baseline {against.label} has no attempt at {len(missing)} of these "
                f"tasks (first: {missing[0]}); a paired test needs the same tasks"
            )
    rng = random.Random(SEED)
    found = []
    for size in sizes:
        draws = [subset(pools, size, rng) for _ in range(repeats)]
        values = {
            name: [statistics.mean(v) for v in zip(*(picked(d, name) for d in draws), strict=True)]
            for name in dict.fromkeys([*REFERENCES, *names])
        }
        results = compared(values, names)
        versus = {}
        if against is not None:
            single = [against.per_task[p.task_id] for p in pools]
            mean = statistics.mean(single)
            versus = {
                r.name: (r.estimate.value - mean, paired_p(r.per_task, single)) for r in results
            }
        selection = {r.name: overhead.per_task(named(r.name).needs, size) for r in results}
        found.append(
            Arm(
                size=size,
                repeats=repeats,
                results=results,
                vs_baseline=versus,
                cost=generation * size,
                selection=selection,
            )
        )
    return found
