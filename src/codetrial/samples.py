"""Judging samples written by any other tool: no model is called.

Accepts the human-eval samples format ({"task_id", "completion"}: the completion
continues the task's prompt), the EvalPlus format ({"task_id", "solution"}: the
whole program) and CodeT's pool format ({"prompt", "samples"}); a line may carry its
likelihood ("logprob_sum" with "logprob_tokens", or "mean_logprob") for selection.
`judge_samples` writes a run directory with every verdict and `samples_results.jsonl`
(each input line with "passed", "outcome" and "result").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codetrial.config import RunConfig
from codetrial.errors import TaskFormatError
from codetrial.executors import Sample, executor
from codetrial.harden.efficiency import measure as measure_efficiency
from codetrial.kinds import load_suite
from codetrial.kinds.function import FUNCTION
from codetrial.records import AttemptRecord, Candidate, Outcome, Verdict
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore, new_manifest, new_run_id
from codetrial.store.artifacts import write_atomic
from codetrial.tasks import Task
from codetrial.tasks.jsonl import JsonLines, read_jsonl
from codetrial.verdict.pool import JudgePool

SAVE_EVERY = 500
TIMEOUT_S = 20.0
CPU_S = 3


CODET_STOPS = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")


def _codet_lines(record: dict[str, Any], task: Task) -> list[Sample]:
    """CodeT's pool format: {"prompt", "samples": [completions]}; each completion
    continues the line's own prompt and is cut at the first of the authors' stop
    markers; an empty list is one failing sample."""
    completions = record["samples"] or [None]
    items = []
    for index, completion in enumerate(completions):
        if completion is None:
            items.append(
                ({"task_id": task.id, "completion_id": index, "completion": None}, task, "")
            )
            continue
        cut = min([completion.find(m) for m in CODET_STOPS if m in completion] or [len(completion)])
        text = completion[:cut]
        line = {"task_id": task.id, "completion_id": index, "completion": text}
        items.append((line, task, record["prompt"] + text))
    return items


def read_samples(
    lines: Iterable[tuple[str, dict[str, Any]]],
    tasks: Sequence[Task],
    prompts: dict[str, str] | None = None,
) -> list[Sample]:
    """(line, task, program) per sample; a TaskFormatError names the line and field.
    Formats: human-eval {"task_id", "completion"}, EvalPlus {"task_id", "solution"},
    CodeT {"prompt", "samples"} (matched to tasks by prompt, through `prompts`:
    prompt -> task id, when the pool's prompts differ from the suite's)."""
    by_id = {t.id: t for t in tasks}
    by_prompt = {t.prompt: t for t in tasks if t.prompt}
    by_prompt.update({prompt: by_id[i] for prompt, i in (prompts or {}).items() if i in by_id})
    samples: list[Sample] = []
    for where, sample in lines:
        if isinstance(sample.get("samples"), list) and "prompt" in sample:
            task = by_prompt.get(sample["prompt"])
            if task is None:
                raise TaskFormatError(f"{where}: field 'prompt' matches no task of this suite")
            samples.extend(_codet_lines(sample, task))
            continue
        task = by_id.get(str(sample.get("task_id")))
        if task is None:
            raise TaskFormatError(f"{where}: field 'task_id' names no task of this suite")
        if isinstance(sample.get("solution"), str):
            program = sample["solution"]
        elif isinstance(sample.get("completion"), str):
            program = task.prompt + sample["completion"]
        else:
            raise TaskFormatError(f"{where}: needs a 'completion' or a 'solution' string")
        samples.append((sample, task, program))
    if not samples:
        raise TaskFormatError("no samples to judge: the file or the list is empty")
    return samples


@dataclass(frozen=True)
class SamplesJob:
    """A samples file to judge and the conditions to judge it under; `prompts` maps a
    pool's own prompts to task ids, `gate` defaults to the suite's profile."""

    samples: JsonLines
    suite: str = "humaneval"
    data: Path | None = None
    prompts: Path | None = None
    workers: int = 2
    timeout: float = TIMEOUT_S
    cpu_time: int = CPU_S
    gate: str | None = None
    runs_dir: Path = Path("runs")
    unsafe_host_exec: bool = False
    efficiency: bool | None = None  # None: when the tasks have heavy inputs
    ray: str | None = None  # a Ray cluster's address ("auto"): shards judged on its nodes


def judge_samples(
    job: SamplesJob,
    *,
    announce: Callable[[Path, int], None] = lambda run_dir, count: None,
    progress: Callable[[AttemptRecord], None] = lambda record: None,
) -> Path:
    """Judge samples into a new run directory, with samples_results.jsonl written
    beside the store; the directory. `announce` hears of the run directory
    and the number of samples before any judging, `progress` of each attempt as it is
    stored."""
    samples, suite, data, workers = job.samples, job.suite, job.data, job.workers
    tasks = load_suite(suite, None, data).only(FUNCTION, "codetrial evaluate")
    items = read_samples(samples.items, tasks, prompt_map(job.prompts) if job.prompts else None)
    model = f"samples/{samples.name}"
    measured = job.efficiency
    if measured is None:
        measured = any(task.heavy_input for task in tasks)
    per_task: dict[str, int] = {}
    for _, task, _ in items:
        per_task[task.id] = per_task.get(task.id, 0) + 1
    config = RunConfig.validated(
        {
            "models": [model],
            "suite": suite,
            "data": data,
            "samples": max(per_task.values()),
            "workers": workers,
            "gate_profile": job.gate or tasks[0].policy,
            "repair_attempts": 0,
            "unsafe_host_exec": job.unsafe_host_exec,
            "efficiency": measured,
            "limits": {"timeout_s": job.timeout, "cpu_s": job.cpu_time},
        }
    )
    with JudgePool(workers, SandboxPolicy.of(config)) as pool:
        source = {**samples.source, "samples": str(len(items))}
        manifest = new_manifest(
            new_run_id(job.runs_dir, suite),
            config,
            tasks,
            backends={model: source},
            prompts={},
            system_prompt="",
            isolation=pool.isolation,
            bwrap=pool.bwrap,
        )
        with RunStore.create(job.runs_dir / manifest.run_id, manifest) as store:
            announce(store.run_dir, len(items))
            run_on = executor(job.ray)
            judged = once_each(items, lambda unique: run_on.verdicts(unique, config, pool))
            verdicts = judge_all(items, model, judged, store, progress)
            _write_results(store.run_dir, items, verdicts)
            if measured:
                measure_efficiency(store, tasks, pool)
    return store.run_dir


def once_each(
    items: Sequence[Sample], judge: Callable[[list[Sample]], Iterable[Verdict]]
) -> Iterator[Verdict]:
    """Each sample's verdict, in order, with a program that repeats one before it for
    the same task judged once: `judge` is given each (task, program) at its first
    place, and a repeat shares that verdict. A sandbox runs the same program the same
    way each time (its hash seed is fixed), so judging it again would say the same at
    the same cost: a pool's samples repeat often (a quarter of CodeT's)."""
    first: dict[tuple[str, str], int] = {}
    unique: list[Sample] = []
    for item in items:
        _, task, program = item
        if first.setdefault((task.id, program), len(unique)) == len(unique):
            unique.append(item)
    judged = iter(judge(unique))
    known: list[Verdict] = []
    for _, task, program in items:
        place = first[(task.id, program)]
        if place == len(known):
            known.append(next(judged))
        yield known[place]


def _write_results(run_dir: Path, items: list[Sample], verdicts: list[Verdict]) -> None:
    """samples_results.jsonl: each sample's line with its verdict."""
    lines = [
        json.dumps(
            {
                **line,
                "passed": v.outcome is Outcome.PASSED,
                "outcome": v.outcome.value,
                "result": v.detail or v.outcome.value,
            }
        )
        for (line, _, _), v in zip(items, verdicts, strict=True)
    ]
    write_atomic(run_dir / "samples_results.jsonl", "\n".join(lines) + "\n")


def judge_all(
    items: list[Sample],
    model: str,
    judged: Iterable[Verdict],
    store: RunStore,
    progress: Callable[[AttemptRecord], None] = lambda record: None,
) -> list[Verdict]:
    """Every sample's verdict, as `judged` gives them in order, stored in batches."""
    index: dict[str, int] = {}
    verdicts, batch = [], []
    for (line, task, code), verdict in zip(items, judged, strict=True):
        verdicts.append(verdict)
        number = index[task.id] = index.get(task.id, -1) + 1
        raw = str(line.get("solution") or line.get("completion") or "")
        record = AttemptRecord.judged(
            verdict, Candidate(raw, code or None), model=model, task_id=task.id, sample=number
        )
        likelihood = _likelihood(line)
        if likelihood:
            record = record.model_copy(update=likelihood)
        batch.append((task, record))
        if len(batch) >= SAVE_EVERY:
            store.save_many(batch, artifacts=False)
            batch = []
        progress(record)
    store.save_many(batch, artifacts=False)
    return verdicts


def _likelihood(line: dict[str, Any]) -> dict[str, float | int]:
    """A sample's log-likelihood when its line carries one: `logprob_sum` with
    `logprob_tokens`, or `mean_logprob` alone."""
    numbers = {k: v for k, v in line.items() if isinstance(v, int | float)}
    if "logprob_sum" in numbers and numbers.get("logprob_tokens"):
        return {
            "logprob_sum": numbers["logprob_sum"],
            "logprob_tokens": int(numbers["logprob_tokens"]),
        }
    if "mean_logprob" in numbers:
        return {"logprob_sum": numbers["mean_logprob"], "logprob_tokens": 1}
    return {}


def prompt_map(path: Path) -> dict[str, str]:
    mapping = {}
    for where, record in read_jsonl(path):
        if not isinstance(record.get("prompt"), str) or "task_id" not in record:
            raise TaskFormatError(f"{where}: needs 'task_id' and 'prompt'")
        mapping[record["prompt"]] = str(record["task_id"])
    return mapping
