"""Evidence for selection out of a run: generated tests, their results, outputs on
their inputs, a judge's and a trained judge's probabilities, gathered for what the
chosen strategies need.

Everything is cached in the run's `selection/` folder, so a second look costs
nothing, and what computing it cost is kept beside (costs.py). `Steps` lets a
caller show progress: it is called with a label and a total and gives back a
context whose value is told how many items are done.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from codetrial.errors import ConfigError
from codetrial.models import Backend, create_backend
from codetrial.models.base import ReadsStates
from codetrial.progress import Steps, quietly
from codetrial.records import GenerationOptions
from codetrial.sandbox import SandboxPolicy
from codetrial.selection import learned as ranking
from codetrial.selection import trained
from codetrial.selection.costs import Cost, Overhead, Step, per_item, timed
from codetrial.selection.evidence import Entry, execute
from codetrial.selection.generated import load_generated_tests, runs_as_one, write_tests
from codetrial.selection.judging import judge_entries
from codetrial.selection.pools import build, chosen_tasks, entries
from codetrial.selection.strategies import Need, TaskPool, needs
from codetrial.selection.subsets import cost
from codetrial.store import RunStore
from codetrial.store.artifacts import read_json, slug, write_atomic
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool


@dataclass(frozen=True)
class Evidence:
    model: str
    tests: dict[str, list[str]]
    pools: list[TaskPool]
    signals: list[list[ranking.Signals]]
    test_source: str
    unusable_tests: list[str]
    trained_judge: str
    generation: Cost
    overhead: Overhead


@dataclass(frozen=True)
class TestSource:
    """Where generated tests come from: a file in CodeT's format (`prompts` maps its
    prompts to task ids), else a model (the run's own unless `model` is given)."""

    __test__ = False

    file: Path | None = None
    prompts: dict[str, str] | None = None
    model: str | None = None
    samples: int = 1


def options(store: RunStore) -> GenerationOptions:
    """The run's own conditions, greedy: tests and verdicts should not be sampled."""
    return dataclasses.replace(store.manifest.config.options(), temperature=0.0)


def backend(name: str, store: RunStore, role: str) -> Backend:
    if name.startswith("samples/"):
        raise ConfigError(
            f"the {role} must be a model codetrial can run, not the samples file {name}; "
            f"pass one, e.g. --{role}-model embedded"
        )
    return create_backend(name, store.manifest.config.endpoints)


def generated_tests(
    store: RunStore, model: str, tasks: list[Task], source: TestSource, steps: Steps
) -> tuple[dict[str, list[str]], str, Path | None]:
    """Generated tests per task, where they came from (the file, or the model) and the
    cache that keeps them (None for a file). A model writes tests only for the tasks
    its cache lacks, and the cache keeps every task's as soon as they are written."""
    if source.file is not None:
        every_task = chosen_tasks(store, "codetrial select")
        prompts = source.prompts or {t.prompt: t.id for t in every_task}
        return load_generated_tests(source.file, tasks, prompts), f"file {source.file}", None
    writer = source.model or model
    cache = store.run_dir / "selection" / f"tests-{slug(writer)}-{source.samples}.json"
    written: dict[str, list[str]] = read_json(cache, dict)
    missing = [t for t in tasks if t.id not in written]
    if missing:
        model_backend = backend(writer, store, "test")
        try:
            with steps("writing tests", len(missing)) as advance, timed(cache) as tally:
                for done, task in enumerate(missing, 1):
                    written[task.id], tokens = write_tests(
                        model_backend, task, options(store), source.samples
                    )
                    write_atomic(cache, json.dumps(written))
                    tally.add(1, tokens)
                    advance(done)
        finally:
            model_backend.close()
    return {t.id: written[t.id] for t in tasks}, f"model {writer}", cache


def judged(
    store: RunStore, everything: list[Entry], judge: str, shots: int, steps: Steps
) -> dict[tuple[str, str], float]:
    """(task id, code) -> the judge's P("yes"), cached per judge and number of shots
    (in `judge_cache`)."""
    cache = judge_cache(store, judge, shots)
    if cache == states_cache(judge, store):
        with_code = [e for e in everything if e.record.code is not None]
        return states(store, with_code, judge, steps).yes
    judge_backend = backend(judge, store, "judge")
    try:
        with (
            steps(f"judging ({judge}, {shots}-shot)", len(everything)) as advance,
            timed(cache) as tally,
        ):
            return judge_entries(
                judge_backend,
                everything,
                options(store),
                shots=shots,
                cache=cache,
                progress=advance,
                computed=tally.add,
            )
    finally:
        judge_backend.close()


def judge_cache(store: RunStore, judge: str, shots: int) -> Path:
    """Where the judge's answers are kept. Asked zero-shot, a judge that shows its
    hidden states answers from the pass that reads them, so a trained judge on the
    same candidates costs no second pass."""
    if shots == 0 and shows_states(store, judge):
        return states_cache(judge, store)
    return store.run_dir / "selection" / f"judge-{slug(judge)}-{shots}shot.json"


@dataclass(frozen=True)
class States:
    """The judge model's hidden states over each candidate's zero-shot judge prompt,
    its P(yes) there, and what identifies them: the model file's hash and the pooling."""

    vectors: dict[tuple[str, str], np.ndarray]
    yes: dict[tuple[str, str], float]
    model_sha256: str
    pooling: str

    def rows(self, everything: Sequence[Entry]) -> np.ndarray:
        return np.stack([self.vectors[(e.task.id, e.record.code or "")] for e in everything])


def shows_states(store: RunStore, judge: str) -> bool:
    judge_backend = backend(judge, store, "judge")
    judge_backend.close()
    return isinstance(judge_backend, ReadsStates)


def states_cache(judge: str, store: RunStore) -> Path:
    """Where the judge's hidden states are kept: per judge and judge prompt."""
    prompt = json.dumps(trained.prompt_hashes(), sort_keys=True)
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:12]
    return store.run_dir / "selection" / f"states-{slug(judge)}-{digest}.npz"


def states(store: RunStore, everything: list[Entry], judge: str, steps: Steps) -> States:
    """The judge's hidden states for every candidate, cached per judge."""
    cache = states_cache(judge, store)
    judge_backend = backend(judge, store, "judge")
    try:
        reader = trained.reads_states(judge_backend, judge)
        with (
            steps(f"reading hidden states ({judge})", len(everything)) as advance,
            timed(cache) as tally,
        ):
            read = trained.read_states(
                reader,
                everything,
                options(store),
                cache=cache,
                progress=advance,
                computed=tally.add,
            )
        sha = judge_backend.conditions().get("file_sha256", "")
        vectors = {key: state for key, (state, _) in read.items()}
        return States(vectors, {key: p for key, (_, p) in read.items()}, sha, reader.hidden_pooling)
    finally:
        judge_backend.close()


def trained_judged(
    store: RunStore, everything: list[Entry], judge: str, saved: Path | None, steps: Steps
) -> tuple[dict[tuple[str, str], float], str]:
    """(task id, code) -> a trained judge's P(correct) for every labelled candidate,
    from the `saved` judge or else cross-validated by task in this run (binary head);
    and which of the two it was. A run of one task has no other task to train on."""
    chosen = trained.labelled(everything)
    if saved is None and len({e.task.id for e in chosen}) < 2:
        return {}, "none: cross-validating needs at least two tasks"
    judge_file = trained.TrainedJudge.load(saved) if saved is not None else None
    read = states(store, chosen, judge, steps)
    rows = read.rows(chosen)
    if judge_file is not None:
        judge_file.check(judge, read.model_sha256, read.pooling)
        scores = judge_file.p_correct("binary", rows, trained.pools(chosen))
        where = f"{saved}, binary head{trained.CENTRED if judge_file.centred else ''}"
    else:
        groups = trained.task_groups(chosen)
        scores = trained.out_of_fold(rows, trained.targets(chosen, "binary"), groups, "binary")
        where = "binary head, cross-validated by task"
    found = {
        (e.task.id, e.record.code or ""): float(p) for e, p in zip(chosen, scores, strict=True)
    }
    return found, where


def gather(
    store: RunStore,
    names: Sequence[str],
    *,
    source: TestSource = TestSource(),
    judge: str = "embedded",
    shots: int = 0,
    workers: int = 2,
    steps: Steps = quietly,
    trained_judge: Path | None = None,
    task_ids: Sequence[str] = (),
) -> list[Evidence]:
    """For each model of the run: its pools, with the evidence the named strategies
    need and what it cost. A task whose generated tests do not compile as one test
    function, the way CodeT runs them, gets no test evidence (CodeT falls back to a
    random pick there). Only the tasks `task_ids` when given."""
    wanted = needs(names)
    tasks = chosen_tasks(store, "codetrial select", task_ids)
    folder = store.run_dir / "selection"
    folder.mkdir(exist_ok=True)
    gathered = []
    for model in store.manifest.config.models:
        by_task = entries(store, tasks, model)
        everything = [e for items in by_task.values() for e in items]
        tests: dict[str, list[str]] = {}
        test_source = "none"
        spent: dict[Need, dict[str, Step]] = {}
        test_steps: dict[str, Step] = {}
        if Need.TESTS in wanted:
            tests, test_source, kept = generated_tests(store, model, tasks, source, steps)
            test_steps[test_source] = Step(per_item(kept) if kept else None, per_task=True)
        executions = {}
        if tests:
            ran = folder / f"executions-{slug(model)}.json"
            with (
                JudgePool(workers, SandboxPolicy.of(store.manifest.config)) as pool,
                steps("running generated tests", len(everything)) as advance,
                timed(ran) as tally,
            ):
                executions = execute(
                    everything,
                    tests,
                    pool,
                    ran,
                    outputs=Need.OUTPUTS in wanted,
                    progress=advance,
                    computed=tally.add,
                )
            test_steps[ran.name] = Step(per_item(ran))
        if test_steps:
            spent[Need.TESTS] = spent[Need.OUTPUTS] = test_steps
        probabilities = {}
        if Need.JUDGE in wanted:
            probabilities = judged(store, everything, judge, shots, steps)
            answers = judge_cache(store, judge, shots)
            spent[Need.JUDGE] = {answers.name: Step(per_item(answers))}
        unusable = sorted(t for t, found in tests.items() if found and not runs_as_one(set(found)))
        scores: dict[tuple[str, str], float] = {}
        trained_source = "none"
        if Need.STATES in wanted:
            scores, trained_source = trained_judged(store, everything, judge, trained_judge, steps)
            read = states_cache(judge, store)
            spent[Need.STATES] = {read.name: Step(per_item(read))}
        pools, signals = build(
            by_task, tests, executions, probabilities, void=unusable, trained=scores
        )
        found = Evidence(
            model=model,
            tests=tests,
            pools=pools,
            signals=signals,
            test_source=test_source,
            unusable_tests=unusable,
            trained_judge=trained_source,
            generation=cost(everything),
            overhead=Overhead(spent),
        )
        gathered.append(found)
    return gathered
