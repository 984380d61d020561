"""Judging another tool's patches for repository tasks, as SWE-bench's harness does.

A predictions file is JSONL with SWE-bench's keys: `instance_id`,
`model_name_or_path` and `model_patch` (a unified diff; empty or null is an empty
patch). Each model named in it becomes a model of the run, and each instance it
predicted one attempt. Instances it did not predict are counted, not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import REPOSITORY_DEFAULTS, Limits, RunConfig
from codetrial.errors import TaskFormatError
from codetrial.kinds import load_suite
from codetrial.kinds.repository import REPOSITORY, judged, scanned
from codetrial.records import AttemptRecord, Candidate
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore, new_manifest, new_run_id
from codetrial.store.manifest import with_environments
from codetrial.tasks import RepositoryTask
from codetrial.tasks.jsonl import JsonLines
from codetrial.verdict.pool import JudgePool, verdict_of

Predictions = dict[str, dict[str, str]]  # model -> instance id -> patch


def is_predictions(lines: JsonLines) -> bool:
    """Whether the first object reads as a SWE-bench prediction."""
    return "model_patch" in lines.first


def read_predictions(lines: JsonLines, tasks: Sequence[RepositoryTask]) -> Predictions:
    """Every model's patch per instance; a TaskFormatError names the line and field."""
    known = {t.id for t in tasks}
    found: Predictions = {}
    for where, line in lines.items:
        instance, model = line.get("instance_id"), line.get("model_name_or_path")
        if instance not in known:
            raise TaskFormatError(f"{where}: field 'instance_id' names no instance of the suite")
        if not isinstance(model, str) or not model:
            raise TaskFormatError(f"{where}: field 'model_name_or_path' must name the model")
        patch = line.get("model_patch")
        if patch is not None and not isinstance(patch, str):
            raise TaskFormatError(f"{where}: field 'model_patch' must be a diff, empty or null")
        if instance in found.setdefault(model, {}):
            raise TaskFormatError(f"{where}: a second prediction of {instance} by {model}")
        found[model][str(instance)] = patch or ""
    if not found:
        raise TaskFormatError("no predictions to judge: the file or the list is empty")
    return found


@dataclass(frozen=True)
class PredictionsJob:
    """A predictions file and the conditions to judge it under."""

    predictions: JsonLines
    suite: str
    data: Path | None
    repos: Path | None
    wheels: Path | None = None
    workers: int = 2
    timeout: float = REPOSITORY_DEFAULTS.timeout_s
    runs_dir: Path = Path("runs")
    unsafe_host_exec: bool = False


def judge_predictions(
    job: PredictionsJob,
    *,
    announce: Callable[[Path, int], None] = lambda run_dir, count: None,
    progress: Callable[[AttemptRecord], None] = lambda record: None,
) -> Path:
    """Judge predictions into a new run directory; the directory."""
    tasks = load_suite(job.suite, None, job.data).only(REPOSITORY, "codetrial evaluate")
    predictions = read_predictions(job.predictions, tasks)
    prepared = REPOSITORY.prepare(tasks, job.repos, job.wheels, "codetrial evaluate")
    config = RunConfig.validated(
        {
            "models": sorted(predictions),
            "suite": job.suite,
            "data": job.data,
            "workers": job.workers,
            "gate_profile": "off",
            "repair_attempts": 0,
            "repos": job.repos,
            "wheels": job.wheels,
            "unsafe_host_exec": job.unsafe_host_exec,
            "limits": Limits.validated(job.timeout, scratch_mb=REPOSITORY_DEFAULTS.scratch_mb),
        }
    )
    with JudgePool.for_tasks(job.workers, SandboxPolicy.of(config), prepared) as pool:
        source = {model: job.predictions.source for model in predictions}
        manifest = new_manifest(
            new_run_id(job.runs_dir, tasks[0].suite),
            config,
            tasks,
            backends=source,
            prompts={},
            system_prompt="",
            isolation=pool.isolation,
            bwrap=pool.bwrap,
        )
        recorded = with_environments(manifest, prepared.environments)
        with RunStore.create(job.runs_dir / manifest.run_id, recorded) as store:
            items = [
                (model, task)
                for model in sorted(predictions)
                for task in tasks
                if task.id in predictions[model]
            ]
            announce(store.run_dir, len(items))
            futures = [judged(pool, predictions[model][task.id], task) for model, task in items]
            for (model, task), future in zip(items, futures, strict=True):
                patch = predictions[model][task.id]
                candidate = scanned(Candidate(patch, None, patch=patch))
                record = AttemptRecord.judged(
                    verdict_of(future), candidate, model=model, task_id=task.id, sample=0
                )
                store.save(task, record)
                progress(record)
    return store.run_dir
