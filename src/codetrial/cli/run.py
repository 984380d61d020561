"""`codetrial run`: a trial of one or more models on a suite, stored and reported."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from codetrial.cli.report import show
from codetrial.cli.views import console
from codetrial.config import Endpoints, Limits, RunConfig, endpoints_from_env
from codetrial.errors import BackendUnavailable, ConfigError
from codetrial.gate import get_profile
from codetrial.models import Backend, create_backend
from codetrial.pipeline import Trial, run_trial
from codetrial.prompts import system_message, template_hashes
from codetrial.records import AttemptRecord
from codetrial.sandbox import open_sandbox
from codetrial.store import RunStore, new_manifest, new_run_id, task_digest
from codetrial.tasks import Task, load_suite

_STABLE_CONDITIONS = ("model", "tag", "digest", "file_sha256")


def _open_resumed(run_dir: Path, backends: list[Backend], tasks: list[Task]) -> RunStore:
    """Reopen a run; refuse when a task or a model is no longer what the run used."""
    store = RunStore.open(run_dir)
    recorded = store.manifest
    for task in tasks:
        if recorded.task_sha256.get(task.id) != task_digest(task):
            raise ConfigError(f"task {task.id} changed since {run_dir} started; start a new run")
    for backend in backends:
        before = recorded.backends.get(backend.name, {})
        now = backend.conditions()
        for key in _STABLE_CONDITIONS:
            if before.get(key) != now.get(key):
                raise ConfigError(
                    f"{backend.name}: {key} was {before.get(key)!r} when {run_dir} started and "
                    f"is {now.get(key)!r} now; start a new run"
                )
    store.mark_resumed()
    return store


def _config(
    models: list[str], suite: str, task: list[str], temperature: float, seed: int, think: bool,
    num_ctx: int, max_tokens: int, repair_attempts: int, timeout: float, gate: str,
    endpoints: Endpoints, unsafe_host_exec: bool,
) -> RunConfig:  # fmt: skip
    try:
        return RunConfig(
            models=models,
            suite=suite,
            task_ids=task,
            temperature=temperature,
            seed=seed,
            think=think,
            num_ctx=num_ctx,
            max_tokens=max_tokens,
            repair_attempts=repair_attempts,
            gate_profile=gate,
            unsafe_host_exec=unsafe_host_exec,
            limits=Limits(timeout_s=timeout, cpu_s=max(1, int(timeout))),
            endpoints=endpoints,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def run(
    model: Annotated[list[str], typer.Option("--model", "-m", help="repeatable")] = ["embedded"],  # noqa: B006
    suite: Annotated[str, typer.Option(help="built-in suite or folder")] = "contracts10",
    task: Annotated[list[str], typer.Option(help="only these task ids")] = [],  # noqa: B006
    temperature: Annotated[float, typer.Option()] = 0.0,
    seed: Annotated[int, typer.Option()] = 42,
    think: Annotated[bool, typer.Option("--think/--no-think")] = False,
    num_ctx: Annotated[int, typer.Option(help="context window")] = 4096,
    max_tokens: Annotated[int, typer.Option(help="max new tokens")] = 512,
    repair_attempts: Annotated[int, typer.Option(help="bounded repair attempts")] = 1,
    timeout: Annotated[float, typer.Option(help="seconds per test run (wall and CPU)")] = 10.0,
    gate: Annotated[str, typer.Option(help="builtins-only, stdlib or off")] = "builtins-only",
    runs_dir: Annotated[Path, typer.Option(help="where run directories go")] = Path("runs"),
    base_url: Annotated[str | None, typer.Option(help="base URL of the HTTP backend")] = None,
    ollama_url: Annotated[str | None, typer.Option(help="Ollama URL ($OLLAMA_HOST)")] = None,
    openai_url: Annotated[str | None, typer.Option(help="($OPENAI_BASE_URL)")] = None,
    api_key: Annotated[str | None, typer.Option(help="($OPENAI_API_KEY)")] = None,
    resume: Annotated[Path | None, typer.Option(help="finish an interrupted run")] = None,
    unsafe_host_exec: Annotated[
        bool, typer.Option(help="run candidates without namespaces (rlimits only)")
    ] = False,
) -> None:
    """Run a trial and print the results table and the path of report.html."""
    endpoints = endpoints_from_env(ollama_url or base_url, openai_url or base_url, api_key)
    if resume is not None:
        config = RunStore.open(resume).manifest.config
        config = config.model_copy(update={"endpoints": endpoints})
    else:
        config = _config(model, suite, task, temperature, seed, think, num_ctx, max_tokens,
                         repair_attempts, timeout, gate, endpoints, unsafe_host_exec)  # fmt: skip
    tasks = load_suite(config.suite, config.task_ids or None)
    profile = get_profile(config.gate_profile)
    sandbox = open_sandbox(config.limits, config.unsafe_host_exec)
    backends = [create_backend(name, config.endpoints) for name in config.models]
    system = system_message(profile.allowed, profile.forbidden)
    if resume is not None:
        store = _open_resumed(resume, backends, tasks)
    else:
        run_id = new_run_id(runs_dir, config.suite)
        manifest = new_manifest(
            run_id, config, tasks, {b.name: b.conditions() for b in backends},
            template_hashes(), system.content, sandbox.isolation,
        )  # fmt: skip
        store = RunStore.create(runs_dir / run_id, manifest)
    console.print(f"run directory: {store.run_dir}", soft_wrap=True, highlight=False)
    try:
        _execute(Trial(config, profile, sandbox, store), tasks, backends)
    except BackendUnavailable as exc:
        show(store)
        raise BackendUnavailable(
            f"{exc}\nfinished work is saved; continue with: codetrial run --resume {store.run_dir}"
        ) from exc
    finally:
        store.close()
        sandbox.close()
        for backend in backends:
            backend.close()


def _execute(trial: Trial, tasks: list[Task], backends: list[Backend]) -> None:
    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
    )  # fmt: skip
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("trial", total=len(tasks) * len(backends))
        seen: set[tuple[str, str]] = set()

        def advance(model: str, task_id: str, record: AttemptRecord) -> None:
            label = "first" if record.attempt == 0 else f"repair {record.attempt}"
            console.print(f"  {model} · {task_id} · {label}: {record.outcome.value}")
            if (model, task_id) not in seen:
                seen.add((model, task_id))
                progress.advance(bar)
            progress.update(bar, description=f"{model} · {task_id}")

        run_trial(trial, tasks, backends, advance)
        progress.update(bar, completed=len(tasks) * len(backends))
    show(trial.store)
