"""`codetrial run`: a trial of one or more models on a suite, stored and reported."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from codetrial.cli.options import DataFile, Gate, RunsDir, Timeout, UnsafeHostExec, Workers
from codetrial.cli.report import show
from codetrial.cli.views import console
from codetrial.config import RunConfig, endpoints_from_env
from codetrial.errors import BackendUnavailable, ConfigError, Interrupted
from codetrial.gate import get_profile
from codetrial.models import Backend, create_backend
from codetrial.pipeline import Trial, run_trial
from codetrial.prompts import system_message, template_hashes
from codetrial.records import AttemptRecord
from codetrial.store import RunStore, new_manifest, new_run_id
from codetrial.tasks import Task, load_suite
from codetrial.verdict.pool import JudgePool

_STABLE_CONDITIONS = ("model", "tag", "digest", "file_sha256", "kv_cache")


def _check_resumable(store: RunStore, backends: list[Backend]) -> None:
    """Refuse to resume when a model is no longer what the run used."""
    run_dir, recorded = store.run_dir, store.manifest
    for backend in backends:
        before = recorded.backends.get(backend.name, {})
        now = backend.conditions()
        for key in _STABLE_CONDITIONS:
            if before.get(key) != now.get(key):
                raise ConfigError(
                    f"{backend.name}: {key} was {before.get(key)!r} when {run_dir} started and "
                    f"is {now.get(key)!r} now; start a new run"
                )


def run(
    model: Annotated[list[str], typer.Option("--model", "-m", help="repeatable")] = ["embedded"],  # noqa: B006
    suite: Annotated[str, typer.Option(help="built-in suite, humaneval, or a path")] = (
        "contracts10"
    ),
    data: DataFile = None,
    task: Annotated[list[str], typer.Option(help="only these task ids")] = [],  # noqa: B006
    limit: Annotated[int | None, typer.Option(help="only the first N tasks")] = None,
    samples: Annotated[int, typer.Option(help="candidates per task")] = 1,
    temperature: Annotated[float, typer.Option()] = 0.0,
    seed: Annotated[int, typer.Option(help="sample i uses seed + i")] = 42,
    think: Annotated[bool, typer.Option("--think/--no-think")] = False,
    num_ctx: Annotated[int, typer.Option(help="context window")] = 4096,
    max_tokens: Annotated[int, typer.Option(help="max new tokens")] = 512,
    repair_attempts: Annotated[int, typer.Option(help="bounded repair attempts")] = 1,
    timeout: Timeout = 10.0,
    cpu_time: Annotated[int | None, typer.Option(help="CPU seconds per test run")] = None,
    workers: Workers = 1,
    gate: Gate = None,
    runs_dir: RunsDir = Path("runs"),
    base_url: Annotated[str | None, typer.Option(help="base URL of the HTTP backend")] = None,
    ollama_url: Annotated[str | None, typer.Option(help="Ollama URL ($OLLAMA_HOST)")] = None,
    openai_url: Annotated[str | None, typer.Option(help="($OPENAI_BASE_URL)")] = None,
    api_key: Annotated[str | None, typer.Option(help="($OPENAI_API_KEY)")] = None,
    resume: Annotated[Path | None, typer.Option(help="finish an interrupted run")] = None,
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Run a trial and print the results table and the path of report.html."""
    endpoints = endpoints_from_env(ollama_url or base_url, openai_url or base_url, api_key)
    resumed = RunStore.open(resume) if resume is not None else None
    if resumed is not None:
        config = resumed.manifest.config.model_copy(update={"endpoints": endpoints})
        tasks = resumed.tasks()
    else:
        tasks = load_suite(suite, task or None, data)[:limit]
        config = RunConfig.validated({
            "models": model, "suite": suite, "data": data,
            "task_ids": [t.id for t in tasks] if (task or limit) else [],
            "samples": samples, "temperature": temperature, "seed": seed, "think": think,
            "num_ctx": num_ctx, "max_tokens": max_tokens, "repair_attempts": repair_attempts,
            "workers": workers, "gate_profile": gate or tasks[0].policy,
            "unsafe_host_exec": unsafe_host_exec, "endpoints": endpoints,
            "limits": {"timeout_s": timeout, "cpu_s": cpu_time or max(1, int(timeout))},
        })  # fmt: skip
    profile = get_profile(config.gate_profile)
    backends = [create_backend(name, config.endpoints) for name in config.models]
    pool = JudgePool(config.workers, config.limits, config.unsafe_host_exec)
    system = system_message(profile.allowed, profile.forbidden)
    if resumed is not None:
        store = resumed
        _check_resumable(store, backends)
        store.mark_resumed()
    else:
        run_id = new_run_id(runs_dir, config.suite)
        manifest = new_manifest(
            run_id, config, tasks, {b.name: b.conditions() for b in backends},
            template_hashes(), system.content, pool.isolation,
        )  # fmt: skip
        store = RunStore.create(runs_dir / run_id, manifest)
    console.print(f"run directory: {store.run_dir}", soft_wrap=True, highlight=False)
    try:
        _execute(Trial(config, profile, pool, store), tasks, backends)
    except BackendUnavailable as exc:  # BackendRefused too, keeping its class and exit code
        show(store)
        raise type(exc)(
            f"{exc}\nfinished work is saved; continue with: codetrial run --resume {store.run_dir}"
        ) from exc
    except KeyboardInterrupt as exc:
        raise Interrupted(
            f"interrupted; finished work is saved; continue with: "
            f"codetrial run --resume {store.run_dir}"
        ) from exc
    finally:
        store.close()
        pool.close()
        for backend in backends:
            backend.close()


class _Live:
    """The progress bar's counters: chains done, passes so far, tokens per second."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress = progress
        self.bar = progress.add_task("trial", total=total, passes=0, rate="")
        self.passes = self.tokens = 0
        self.seconds = 0.0

    def __call__(self, record: AttemptRecord) -> None:
        self.tokens += record.completion_tokens or 0
        self.seconds += record.generation_s
        if record.passed:
            self.passes += 1
        if record.attempt == 0:
            self.progress.advance(self.bar)
        rate = f"{self.tokens / self.seconds:.0f} tok/s" if self.seconds else ""
        self.progress.update(
            self.bar, description=f"{record.model} · {record.task_id}", passes=self.passes,
            rate=rate,
        )  # fmt: skip


def _execute(trial: Trial, tasks: list[Task], backends: list[Backend]) -> None:
    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("passes {task.fields[passes]}"), TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(), TimeRemainingColumn(),
    )  # fmt: skip
    total = len(tasks) * len(backends) * trial.config.samples
    with Progress(*columns, console=console, transient=True) as progress:
        run_trial(trial, tasks, backends, _Live(progress, total))
    show(trial.store)
