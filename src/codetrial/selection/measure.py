"""Measuring the choosers: a judge model's verdicts against the tests' (written to
`judge_eval.json` beside the store), asked zero- or few-shot or trained on its hidden
states, and a learned ranker; the trained ones are scored on tasks they never saw."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from codetrial.errors import ConfigError
from codetrial.progress import Steps
from codetrial.prompts import SELECTION_TEMPLATES, template_hashes
from codetrial.report import JUDGE_EVAL
from codetrial.selection import learned as ranking
from codetrial.selection import trained
from codetrial.selection.evidence import Entry
from codetrial.selection.gather import States, TestSource, gather, judged, shows_states, states
from codetrial.selection.judging import (
    THRESHOLDS,
    CalibrationBin,
    Quality,
    auc,
    calibration,
    quality,
    task_auc,
)
from codetrial.selection.pools import chosen_tasks, entries
from codetrial.selection.strategies import (
    JUDGE_THRESHOLD,
    StrategyResult,
    TaskPool,
    compare_strategies,
)
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic


@dataclass(frozen=True)
class JudgeError:
    """A candidate the judge got wrong, for a person to sort by cause: a false positive
    (wrong code judged correct) or a false negative, with the judge's P(correct), the
    candidate's code, its tests' outcome and its first failing test."""

    task_id: str
    model: str
    sample: int
    kind: str  # "false positive" or "false negative"
    p_correct: float
    outcome: str
    first_failure: str
    code: str


def _errors(everything: Sequence[Entry], p_correct: Sequence[float]) -> list[JudgeError]:
    """Every candidate whose judged verdict (P(correct) at least JUDGE_THRESHOLD) is
    not its tests'."""
    found = []
    for p, entry in zip(p_correct, everything, strict=True):
        record, judged_correct = entry.record, p >= JUDGE_THRESHOLD
        if judged_correct == record.passed:
            continue
        failing = next((t for t in record.tests if t.outcome.value in ("failed", "error")), None)
        first = (
            f"{failing.name}: {failing.exception_type or failing.outcome.value}" if failing else ""
        )
        found.append(
            JudgeError(
                task_id=entry.task.id,
                model=record.model,
                sample=record.sample,
                kind="false positive" if judged_correct else "false negative",
                p_correct=float(p),
                outcome=record.outcome.value,
                first_failure=first,
                code=record.code or "",
            )
        )
    return found


@dataclass(frozen=True)
class JudgeQuality:
    """One judge setting on the same candidates of a run, against the tests' verdicts:
    the model asked with `shots` worked examples, or a classifier on its hidden states
    (`shots` None). `task_auc` is the ROC AUC within a task, over the
    `tasks_with_both` tasks that have correct and wrong candidates."""

    judge: str
    setting: str
    shots: int | None
    candidates: int
    correct: int
    auc: float | None
    task_auc: float | None
    tasks_with_both: int
    thresholds: list[Quality]
    calibration: list[CalibrationBin]
    prompt_sha256: dict[str, str]
    errors: list[JudgeError]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "setting": self.setting,
            "shots": self.shots,
            "candidates": self.candidates,
            "prompt_sha256": self.prompt_sha256,
            "correct": self.correct,
            "auc": self.auc,
            "task_auc": self.task_auc,
            "tasks_with_both": self.tasks_with_both,
            "thresholds": [asdict(r) for r in self.thresholds],
            "calibration": [asdict(b) for b in self.calibration],
            "errors": [asdict(e) for e in self.errors],
        }


def _measured(
    judge: str,
    setting: str,
    shots: int | None,
    everything: Sequence[Entry],
    p_correct: Iterable[float],
) -> JudgeQuality:
    """The setting's P(correct) for each of `everything` against the tests' verdicts."""
    p_correct = list(p_correct)
    by_task: dict[str, list[tuple[float, bool]]] = {}
    for p, entry in zip(p_correct, everything, strict=True):
        by_task.setdefault(entry.task.id, []).append((float(p), entry.record.passed))
    pairs = [pair for task_pairs in by_task.values() for pair in task_pairs]
    both = [ps for ps in by_task.values() if len({truth for _, truth in ps}) == 2]
    return JudgeQuality(
        judge=judge,
        setting=setting,
        shots=shots,
        candidates=len(pairs),
        correct=sum(t for _, t in pairs),
        auc=auc(pairs),
        task_auc=task_auc(both),
        tasks_with_both=len(both),
        thresholds=[quality(pairs, t) for t in THRESHOLDS],
        calibration=calibration(pairs),
        prompt_sha256=template_hashes(SELECTION_TEMPLATES),
        errors=_errors(everything, p_correct),
    )


def candidates(
    store: RunStore, per_task: int | None, command: str, task_ids: Sequence[str] = ()
) -> list[Entry]:
    """Every labelled candidate of the run's models, the first `per_task` of each
    task's (all without a cap), of the tasks `task_ids` (all when empty)."""
    tasks = chosen_tasks(store, command, task_ids)
    return [
        e
        for model in store.manifest.config.models
        for items in entries(store, tasks, model).values()
        for e in trained.labelled(items)[:per_task]
    ]


@dataclass(frozen=True)
class Training:
    """Hidden states and labels of candidates from one or more runs (`pools`: each
    one's pool, see trained.pools); `groups` are their tasks, across runs."""

    entries: list[Entry]
    rows: np.ndarray
    states: States
    pools: np.ndarray

    @property
    def groups(self) -> np.ndarray:
        return trained.task_groups(self.entries)

    def read_as(self, centre: bool) -> np.ndarray:
        """The states as read, or centred on each pool."""
        return trained.centred(self.rows, self.pools) if centre else self.rows

    def out_of_fold(self, judge: str, centre: bool) -> list[JudgeQuality]:
        """Each head, measured on tasks it never saw, trained on states as read or
        centred on each task."""
        rows = self.read_as(centre)
        return [
            _measured(
                judge,
                f"{trained.setting(head, centre)}, out-of-fold by task",
                None,
                self.entries,
                trained.out_of_fold(rows, trained.targets(self.entries, head), self.groups, head),
            )
            for head in trained.HEADS
        ]


def judge_quality(
    store: RunStore,
    judge: str,
    *,
    shots: Sequence[int],
    steps: Steps,
    train: bool | None = None,
    trained_judge: Path | None = None,
    per_task: int | None = None,
    centre: bool = False,
    task_ids: Sequence[str] = (),
) -> list[JudgeQuality]:
    """The judge's quality asked with each number of worked examples and as trained
    judges: both heads out-of-fold in this run (when `train`; by default, when the
    judge shows its hidden states), also centred on each task (`centre`), and those
    of a saved one; all on the same candidates, of the tasks `task_ids` (all when
    empty). judge_eval.json is written."""
    everything = candidates(store, per_task, "codetrial judge-eval", task_ids)
    tasks = len({e.task.id for e in everything})
    if train is None:
        train = tasks > 1 and shows_states(store, judge)
    if (train or centre) and tasks < 2:
        raise ConfigError(
            f"measuring trained judges out-of-fold needs at least two tasks, and these "
            f"candidates are of {tasks}: judge more tasks, or leave out --train and --centre"
        )
    (store.run_dir / "selection").mkdir(exist_ok=True)
    found = []
    wants_states = train or centre or trained_judge is not None
    read = states(store, everything, judge, steps) if wants_states else None
    for count in shots:
        probabilities = (
            read.yes
            if read is not None and count == 0
            else judged(store, everything, judge, count, steps)
        )
        found.append(
            _measured(
                judge,
                f"{count}-shot",
                count,
                everything,
                [probabilities[(e.task.id, e.record.code or "")] for e in everything],
            )
        )
    if read is not None:
        training = Training(everything, read.rows(everything), read, trained.pools(everything))
        if train:
            found += training.out_of_fold(judge, centre=False)
        if centre:
            found += training.out_of_fold(judge, centre=True)
        if trained_judge is not None:
            saved = trained.TrainedJudge.load(trained_judge)
            saved.check(judge, read.model_sha256, read.pooling)
            found += [
                _measured(
                    judge,
                    f"{trained.setting(head, saved.centred)}, {trained_judge.name}",
                    None,
                    everything,
                    saved.p_correct(head, training.rows, training.pools),
                )
                for head in saved.heads
            ]
    document = [setting.as_dict() for setting in found]
    write_atomic(store.run_dir / JUDGE_EVAL, json.dumps(document, indent=1))
    return found


def train_judge(
    runs: Sequence[Path],
    out: Path,
    *,
    judge: str,
    per_task: int | None,
    steps: Steps,
    centre: bool = False,
    task_ids: Sequence[str] = (),
) -> list[JudgeQuality]:
    """Train both heads on the runs' candidates (of the tasks `task_ids`; all when
    empty), on states as read or centred on each task, measure them out-of-fold by
    task (a task is one group across runs), and save the ones fitted on everything."""
    chosen: list[Entry] = []
    rows, found = [], []
    numbers: list[int] = []
    for number, run_dir in enumerate(runs):
        with RunStore.open(run_dir) as store:
            everything = candidates(store, per_task, "codetrial train-judge", task_ids)
            (store.run_dir / "selection").mkdir(exist_ok=True)
            read = states(store, everything, judge, steps)
        chosen += everything
        numbers += [number] * len(everything)
        rows.append(read.rows(everything) if everything else np.zeros((0, 0)))
        found.append(read)
    if len({(s.model_sha256, s.pooling) for s in found}) > 1:
        raise ConfigError(f"the judge {judge} read these runs with different models")
    if not chosen:
        raise ConfigError("these runs have no candidates with code to learn from")
    training = Training(
        chosen, np.vstack([r for r in rows if r.size]), found[0], trained.pools(chosen, numbers)
    )
    measured = training.out_of_fold(judge, centre)
    groups = training.groups
    learned = training.read_as(centre)
    heads = {
        head: trained.fit(learned, trained.targets(chosen, head), groups, head)
        for head in trained.HEADS
    }
    kinds = Counter(trained.kind(e.record.outcome) for e in chosen)
    trained.TrainedJudge(
        judge=judge,
        model_sha256=found[0].model_sha256,
        pooling=found[0].pooling,
        prompt_sha256=trained.prompt_hashes(),
        heads=heads,
        trained_on={
            "runs": [str(r) for r in runs],
            "candidates": len(chosen),
            "tasks": len(set(groups.tolist())),
            "per_task": per_task,
            "kinds": dict(kinds),
            "out_of_fold": [m.as_dict() for m in measured],
        },
        centred=centre,
    ).save(out)
    return measured


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
        with RunStore.open(run_dir) as store:
            for evidence in gather(store, ["ranker"], source=source, workers=workers, steps=steps):
                pools += evidence.pools
                signals += evidence.signals
                unusable += evidence.unusable_tests
    rows = ranking.table(pools, signals)
    scored = ranking.scored(pools, ranking.cross_validated(pools, rows))
    results = compare_strategies(scored, ["random", "first", "ranker", "oracle"])
    ranking.fit(rows, ranking.labels(pools)).save(out)
    return Trained(scored, results, sorted(set(unusable)))
