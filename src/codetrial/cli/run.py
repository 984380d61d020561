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

from codetrial import environments, localize
from codetrial.cli.options import DataFile, Gate, Repos, RunsDir, UnsafeHostExec, Wheels, Workers
from codetrial.cli.report import show
from codetrial.cli.views import console
from codetrial.config import (
    Limits,
    RunConfig,
    endpoints_from_env,
)
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import BackendUnavailable, ConfigError, Interrupted
from codetrial.gate import get_profile
from codetrial.models import Backend, create_backend
from codetrial.pipeline import Trial, run_trial, system_of
from codetrial.prompts import TEMPLATES, WORKSPACE_TEMPLATES, template_hashes
from codetrial.records import AttemptRecord
from codetrial.store import RunStore, new_manifest, new_run_id
from codetrial.tasks import (
    AnyTask,
    RepositoryTask,
    WorkspaceTask,
    defaults_for,
    gate_for,
    load_suite,
)
from codetrial.verdict.pool import JudgePool

_STABLE_CONDITIONS = ("model", "tag", "digest", "file_sha256", "kv_cache")


def _shape_conditions(
    tasks: list[AnyTask], suite: str, edit_format: str | None, gate: str | None,
    timeout: float | None, cpu_time: int | None, tries: int | None,
    repair_attempts: int | None, num_ctx: int | None, max_tokens: int | None,
) -> dict[str, object]:  # fmt: skip
    """The conditions that depend on the suite's shape of task: the edit format, the
    gate, the defaults of the timeout, the context and the answer's length, and the
    tries."""
    workspace = any(isinstance(t, WorkspaceTask | RepositoryTask) for t in tasks)
    if edit_format is not None and not workspace:
        raise ConfigError(
            f"--edit-format is for workspace and repository tasks; suite {suite!r} has none"
        )
    if tries is not None and repair_attempts is not None and repair_attempts != tries - 1:
        raise ConfigError(
            f"--tries {tries} means --repair-attempts {tries - 1}, not {repair_attempts}: "
            "give one of them"
        )
    if tries is not None and tries < 1:
        raise ConfigError("--tries must be at least 1 (the first try)")
    defaults = defaults_for(tasks)
    if workspace:
        edit_format = EDIT_FORMATS.get(edit_format or "whole").name
    limits = Limits.validated(
        defaults.timeout_s if timeout is None else timeout, cpu_time, defaults.scratch_mb
    )
    return {
        "num_ctx": defaults.num_ctx if num_ctx is None else num_ctx,
        "max_tokens": defaults.max_tokens if max_tokens is None else max_tokens,
        "edit_format": edit_format,
        "gate_profile": gate_for(tasks, gate),
        "repair_attempts": tries - 1 if tries is not None else (
            1 if repair_attempts is None else repair_attempts
        ),
        "limits": limits,
    }  # fmt: skip


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
    repos: Repos = None,
    wheels: Wheels = None,
    task: Annotated[list[str], typer.Option(help="only these task ids")] = [],  # noqa: B006
    limit: Annotated[int | None, typer.Option(help="only the first N tasks")] = None,
    samples: Annotated[int, typer.Option(help="candidates per task")] = 1,
    temperature: Annotated[float, typer.Option()] = 0.0,
    seed: Annotated[int, typer.Option(help="sample i uses seed + i")] = 42,
    think: Annotated[bool, typer.Option("--think/--no-think")] = False,
    num_ctx: Annotated[
        int | None,
        typer.Option(help="context window (default 4096; 8192 for workspace and repository tasks)"),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(help="max new tokens (default 512; 2048 for workspace and repository tasks)"),
    ] = None,
    repair_attempts: Annotated[
        int | None, typer.Option(help="bounded repair attempts (default 1)")
    ] = None,
    tries: Annotated[
        int | None, typer.Option(help="the first try and its repairs: --repair-attempts + 1")
    ] = None,
    edit_format: Annotated[
        str | None,
        typer.Option(help="workspace and repository tasks: whole, diff or udiff (default whole)"),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="wall seconds per test run (default 10; 60 for workspace, 120 for "
            "repository tasks)"
        ),
    ] = None,
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
        if limit is not None and limit < 1:
            raise ConfigError("--limit must be at least 1")
        tasks = load_suite(suite, task or None, data)[:limit]
        shaped = _shape_conditions(
            tasks, suite, edit_format, gate, timeout, cpu_time, tries, repair_attempts,
            num_ctx, max_tokens,
        )  # fmt: skip
        config = RunConfig.validated({
            "models": model, "suite": suite, "data": data,
            "task_ids": [t.id for t in tasks] if (task or limit) else [],
            "samples": samples, "temperature": temperature, "seed": seed, "think": think,
            "workers": workers, "unsafe_host_exec": unsafe_host_exec, "endpoints": endpoints,
            "repos": repos, "wheels": wheels, **shaped,
        })  # fmt: skip
    profile = get_profile(config.gate_profile)
    repositories, built = environments.for_tasks(
        tasks, config.repos, config.wheels, "codetrial run"
    )
    shown = localize.views(tasks, config)
    backends = [create_backend(name, config.endpoints) for name in config.models]
    pool = JudgePool(config.workers, config.limits, config.unsafe_host_exec, repositories)
    if resumed is not None:
        store = resumed
        _check_resumable(store, backends)
        store.mark_resumed()
    else:
        run_id = new_run_id(runs_dir, config.suite)
        templates: tuple[str, ...] = TEMPLATES
        if config.edit_format is not None:
            templates = (*WORKSPACE_TEMPLATES, f"edits/{config.edit_format}.md")
        if shown:
            templates = (*templates, "repository_issue.md")
        system = system_of(config, profile, tasks[0])
        manifest = new_manifest(
            run_id, config, tasks, {b.name: b.conditions() for b in backends},
            template_hashes(templates), system.content, pool.isolation,
        )  # fmt: skip
        notes = {task_id: view.note for task_id, view in shown.items()}
        store = RunStore.create(runs_dir / run_id, environments.recorded(manifest, built, notes))
    console.print(f"run directory: {store.run_dir}", soft_wrap=True, highlight=False)
    try:
        _execute(Trial(config, profile, pool, store, shown), tasks, backends)
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


def _execute(trial: Trial, tasks: list[AnyTask], backends: list[Backend]) -> None:
    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("passes {task.fields[passes]}"), TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(), TimeRemainingColumn(),
    )  # fmt: skip
    total = len(tasks) * len(backends) * trial.config.samples
    with Progress(*columns, console=console, transient=True) as progress:
        run_trial(trial, tasks, backends, _Live(progress, total))
    show(trial.store)
