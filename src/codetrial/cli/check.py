"""`codetrial check`: judge a file, or every task's reference, without any model."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codetrial import environments
from codetrial.cli.options import DataFile, Gate, Repos, UnsafeHostExec, Wheels, Workers
from codetrial.cli.views import console
from codetrial.config import Limits
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import ConfigError
from codetrial.gate import Profile, get_profile
from codetrial.pipeline import submit, verdict_of
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.tasks import (
    AnyTask,
    RepositoryTask,
    WorkspaceTask,
    defaults_for,
    gate_for,
    load_suite,
)
from codetrial.verdict.pool import JudgePool


def _show(task_id: str, verdict: Verdict) -> None:
    style = "green" if verdict.outcome is Outcome.PASSED else "red"
    console.print(f"{task_id}: [bold {style}]{verdict.outcome.value}[/] {verdict.detail}")
    if verdict.tests:
        table = Table()
        for header in ("test", "visibility", "outcome", "exception"):
            table.add_column(header)
        for t in verdict.tests:
            table.add_row(t.name, t.visibility.value, t.outcome.value, t.exception_type or "")
        console.print(table)
    if verdict.outcome is not Outcome.PASSED:
        output = verdict.hidden_output or verdict.visible_output
        console.print(output, markup=False, highlight=False)


_Checks = list[tuple[str, Future[Verdict] | None, Future[Verdict] | None]]


def _references(tasks: list[AnyTask], pool: JudgePool, profile: Profile) -> _Checks:
    """Per task: the verdict on its reference (None without one) and, for a workspace
    task, on its files as the model first sees them (a repository task: its gold
    patch, and its tests at the base commit)."""
    checks: _Checks = []
    for task in tasks:
        if isinstance(task, RepositoryTask):
            start = pool.submit_repository("", task, baseline=True)
            checks.append((task.id, pool.submit_repository(task.gold_patch, task), start))
        elif isinstance(task, WorkspaceTask):
            start = pool.submit_workspace(dict(task.files), task)
            reference = None
            if task.reference:
                reference = pool.submit_workspace(dict(task.files) | dict(task.reference), task)
            checks.append((task.id, reference, start))
        elif task.reference is not None:
            candidate = Candidate(task.reference, task.reference)
            checks.append((task.id, pool.submit(candidate, task, profile), None))
        else:
            checks.append((task.id, None, None))
    return checks


def _check_references(tasks: list[AnyTask], pool: JudgePool, profile: Profile) -> bool:
    table = Table(title="References and starting files")
    for header in ("task", "reference", "files as given"):
        table.add_column(header)
    sound = True
    for task_id, reference, start in _references(tasks, pool, profile):
        cells = []
        if reference is None:
            cells.append("[dim]no reference[/]")
        else:
            outcome = verdict_of(reference).outcome
            sound &= outcome is Outcome.PASSED
            cells.append(f"[{'green' if outcome is Outcome.PASSED else 'red'}]{outcome.value}[/]")
        if start is None:
            cells.append("")
        else:
            outcome = verdict_of(start).outcome
            sound &= outcome is not Outcome.PASSED
            cells.append(f"[{'red' if outcome is Outcome.PASSED else 'green'}]{outcome.value}[/]")
        table.add_row(task_id, *cells)
    console.print(table)
    return sound


def check(
    file: Annotated[
        Path | None,
        typer.Argument(help="a Python file, a model's response, or a repository task's patch"),
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="the task id to judge FILE against")
    ] = None,
    references: Annotated[
        bool, typer.Option(help="judge every task's reference instead of a file")
    ] = False,
    suite: Annotated[str, typer.Option(help="built-in suite, benchmark or path")] = "contracts10",
    data: DataFile = None,
    repos: Repos = None,
    wheels: Wheels = None,
    edit_format: Annotated[
        str, typer.Option(help="workspace tasks: the format of FILE (whole, diff, udiff)")
    ] = "whole",
    gate: Gate = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="wall seconds per test run (default 10; 60 for workspace tasks)"),
    ] = None,
    workers: Workers = 1,
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Judge FILE against --task as `run` judges a response (its code extracted, or its
    edit applied to a workspace task's files; a repository task's FILE is a patch);
    exit 0 only when it passes. With --references, judge every task's reference
    solution and, for workspace tasks, the files as given (repository tasks: the gold
    patch, and the tests at the base commit); exit 0 only when every reference passes
    and no starting files do."""
    if references == (file is not None) or (file is not None and task is None):
        raise ConfigError("give FILE with --task ID, or --references")
    tasks = load_suite(suite, [task] if task else None, data)
    profile = get_profile(gate_for(tasks, gate))
    text = ""
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {file}: {exc}") from exc
    defaults = defaults_for(tasks)
    limits = Limits.validated(
        defaults.timeout_s if timeout is None else timeout, scratch_mb=defaults.scratch_mb
    )
    repositories, _ = environments.for_tasks(tasks, repos, wheels, "codetrial check")
    pool = JudgePool(workers, limits, unsafe_host_exec, repositories)
    try:
        console.print(f"isolation: {pool.isolation}  gate: {profile.name}", highlight=False)
        if references:
            passed = _check_references(tasks, pool, profile)
        else:
            (the_task,) = tasks
            if isinstance(the_task, RepositoryTask):
                future = pool.submit_repository(text, the_task)
            else:
                _, future = submit(pool, profile, EDIT_FORMATS.get(edit_format), the_task, text)
            verdict = verdict_of(future)
            _show(the_task.id, verdict)
            passed = verdict.outcome is Outcome.PASSED
    finally:
        pool.close()
    raise typer.Exit(0 if passed else 1)
