"""Measuring the choosers: a judge model's verdicts against the tests' (written to
`judge_eval.json` beside the store), and a learned ranker trained on execution-labelled
candidates and scored on tasks it never saw."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from codetrial.progress import Steps
from codetrial.prompts import SELECTION_TEMPLATES, template_hashes
from codetrial.report import JUDGE_EVAL
from codetrial.selection import StrategyResult, TaskPool, compare_strategies
from codetrial.selection import learned as ranking
from codetrial.selection.gather import TestSource, gather, judged
from codetrial.selection.judging import THRESHOLDS, CalibrationBin, Quality, calibration, quality
from codetrial.selection.pools import entries
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic
from codetrial.tasks import function_tasks


@dataclass(frozen=True)
class JudgeQuality:
    """One judge setting on every candidate of a run, against the tests' verdicts."""

    judge: str
    shots: int
    candidates: int
    correct: int
    thresholds: list[Quality]
    calibration: list[CalibrationBin]
    prompt_sha256: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge, "shots": self.shots, "candidates": self.candidates,
            "prompt_sha256": self.prompt_sha256, "correct": self.correct,
            "thresholds": [asdict(r) for r in self.thresholds],
            "calibration": [asdict(b) for b in self.calibration],
        }  # fmt: skip


def judge_quality(
    store: RunStore, judge: str, shots: Sequence[int], steps: Steps
) -> list[JudgeQuality]:
    """The judge's quality at each number of worked examples; judge_eval.json written."""
    tasks = function_tasks(store.tasks(), "codetrial judge-eval")
    everything = [
        e
        for model in store.manifest.config.models
        for items in entries(store, tasks, model).values()
        for e in items
        if e.record.code is not None
    ]
    (store.run_dir / "selection").mkdir(exist_ok=True)
    hashes = template_hashes(SELECTION_TEMPLATES)
    found = []
    for count in shots:
        probabilities = judged(store, everything, judge, count, steps)
        pairs = [(probabilities[(e.task.id, e.record.code or "")], e.record.passed)
                 for e in everything]  # fmt: skip
        found.append(
            JudgeQuality(
                judge,
                count,
                len(pairs),
                sum(t for _, t in pairs),
                [quality(pairs, t) for t in THRESHOLDS],
                calibration(pairs),
                hashes,
            )
        )
    document = [setting.as_dict() for setting in found]
    write_atomic(store.run_dir / JUDGE_EVAL, json.dumps(document, indent=1))
    return found


@dataclass(frozen=True)
class Trained:
    """A ranker's cross-validated picks: the pools scored on tasks it never saw, the
    ranker against random, first and the oracle there, and the tasks whose generated
    tests gave it no evidence (they do not compile as one test function)."""

    pools: list[TaskPool]
    results: list[StrategyResult]
    tests_unusable: list[str]


def train_ranker(
    runs: Sequence[Path], out: Path, source: TestSource, workers: int, steps: Steps
) -> Trained:
    """Train a ranker on the runs' candidates, measure it by cross-validation split by
    task, and save the one fitted on everything to `out`."""
    pools: list[TaskPool] = []
    signals: list[list[ranking.Signals]] = []
    unusable: list[str] = []
    for run_dir in runs:
        store = RunStore.open(run_dir)
        try:
            for evidence in gather(store, ["ranker"], source=source, workers=workers, steps=steps):
                pools += evidence.pools
                signals += evidence.signals
                unusable += evidence.unusable_tests
        finally:
            store.close()
    rows = ranking.table(pools, signals)
    scored = ranking.scored(pools, ranking.cross_validated(pools, rows))
    results = compare_strategies(scored, ["random", "first", "ranker", "oracle"])
    ranking.fit(rows, ranking.labels(pools)).save(out)
    return Trained(scored, results, sorted(set(unusable)))
