"""Selection strategies side by side on a run's candidates: the evidence they need is
gathered, the learned ranker scored (cross-validated by task unless a trained one is
given), every strategy measured on the same pools, and the result written to
`selection.json` beside the store."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from codetrial.errors import ConfigError
from codetrial.progress import Steps, quietly
from codetrial.prompts import SELECTION_TEMPLATES, template_hashes
from codetrial.report import SELECTION
from codetrial.selection import learned as ranking
from codetrial.selection.gather import TestSource, gather
from codetrial.selection.pools import chosen_tasks
from codetrial.selection.strategies import (
    STRATEGIES,
    Need,
    StrategyResult,
    TaskPool,
    compare_strategies,
    named,
    needs,
)
from codetrial.selection.subsets import Arm, Baseline, arms, baseline
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic


@dataclass(frozen=True)
class ModelSelection:
    """The strategies measured on one model's candidates. `unavailable`: strategies
    asked for that need generated tests where there were none; `tests_unusable`: tasks
    whose generated tests do not compile as one test function, the way CodeT runs
    them (codet and the ranker get no test evidence there, so CodeT picks at random)."""

    model: str
    pools: list[TaskPool]
    strategies: list[StrategyResult]
    test_source: str
    tests_unusable: list[str]
    unavailable: list[str]
    judge: str | None
    trained_judge: str
    ranker: str
    prompt_sha256: dict[str, str]
    arms: list[Arm]
    baseline: Baseline | None

    def as_dict(self) -> dict[str, Any]:
        """The entry selection.json holds for this model."""
        return {
            "model": self.model,
            "tasks": len(self.pools),
            "candidates": sum(len(p.candidates) for p in self.pools),
            "test_source": self.test_source,
            "tests_unusable": self.tests_unusable,
            "unavailable": self.unavailable,
            "judge": self.judge,
            "trained_judge": self.trained_judge,
            "ranker": self.ranker,
            "prompt_sha256": self.prompt_sha256,
            "strategies": [
                {**asdict(r), "estimate": r.estimate.as_dict()} for r in self.strategies
            ],
            "subsets": [arm.as_dict() for arm in self.arms],
            "baseline": self.baseline
            and {
                "label": self.baseline.label,
                "estimate": self.baseline.estimate.as_dict(),
                "cost": asdict(self.baseline.cost),
            },
        }


def strategy_names(strategies: str | Sequence[str]) -> list[str]:
    """ "all", a comma-separated list or a list of names; a ConfigError names an
    unknown one and the known ones."""
    if strategies == "all":
        return STRATEGIES.names()
    if isinstance(strategies, str):
        strategies = strategies.split(",")
    names = [n.strip() for n in strategies if n.strip()]
    needs(names)
    return names


def side_by_side(
    store: RunStore,
    names: Sequence[str],
    source: TestSource,
    *,
    judge: str = "embedded",
    shots: int = 0,
    ranker: Path | None = None,
    workers: int = 2,
    steps: Steps = quietly,
    trained_judge: Path | None = None,
    sizes: Sequence[int] = (),
    repeats: int = 10,
    against: Path | None = None,
    task_ids: Sequence[str] = (),
) -> list[ModelSelection]:
    """Every named strategy on each model's candidates (of the tasks `task_ids`; all
    when empty), on the whole pools and on random subsets of each of `sizes`
    candidates (`repeats` each, set against the single attempt of the run `against`
    when given); selection.json written."""
    cross_validating = "ranker" in names and ranker is None
    if cross_validating and len(chosen_tasks(store, "codetrial select", task_ids)) < 2:
        raise ConfigError(
            "the ranker is cross-validated by task here, which needs at least two tasks: "
            "select on more, pass a trained one (--ranker FILE), or choose --strategies "
            "without it"
        )
    single = None
    if against is not None:
        with RunStore.open(against) as other:
            single = baseline(other, task_ids)
    found = []
    hashes = template_hashes(SELECTION_TEMPLATES)
    for evidence in gather(
        store,
        names,
        source=source,
        judge=judge,
        shots=shots,
        workers=workers,
        steps=steps,
        trained_judge=trained_judge,
        task_ids=task_ids,
    ):
        pools = evidence.pools
        usable = [n for n in names if Need.TESTS not in named(n).needs or evidence.tests]
        if "ranker" in usable:
            rows = ranking.table(pools, evidence.signals)
            scores = (
                ranking.Ranker.load(ranker).score(rows)
                if ranker is not None
                else ranking.cross_validated(pools, rows)
            )
            pools = ranking.scored(pools, scores)
        found.append(
            ModelSelection(
                model=evidence.model,
                pools=pools,
                strategies=compare_strategies(pools, usable),
                test_source=evidence.test_source,
                tests_unusable=evidence.unusable_tests,
                unavailable=sorted(set(names) - set(usable)),
                judge=f"{judge}, {shots}-shot" if "judge" in usable else None,
                trained_judge=evidence.trained_judge,
                ranker=str(ranker) if ranker else "cross-validated by task",
                prompt_sha256=hashes,
                arms=arms(
                    pools,
                    usable,
                    sizes=sizes,
                    repeats=repeats,
                    generation=evidence.generation,
                    overhead=evidence.overhead,
                    against=single,
                ),
                baseline=single,
            )
        )
    document = [selection.as_dict() for selection in found]
    write_atomic(store.run_dir / SELECTION, json.dumps(document, indent=1))
    return found
