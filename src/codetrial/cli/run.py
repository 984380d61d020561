"""`codetrial run`: a trial of one or more models on a suite, stored and reported."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import codetrial
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import (
    DataFile,
    Efficiency,
    Gate,
    Json,
    Packages,
    Repos,
    Requirements,
    Rules,
    RunsDir,
    TimeFactor,
    TimeFloor,
    UnsafeHostExec,
    Wheels,
    Workers,
    packages_of,
)
from codetrial.cli.report import show
from codetrial.cli.views import Bar, out
from codetrial.config import TIME_FACTOR, TIME_FLOOR, Price


def run(
    model: Annotated[list[str], typer.Option("--model", "-m", help="repeatable")] = ["embedded"],  # noqa: B006
    suite: Annotated[str, typer.Option(help="built-in suite, humaneval, or a path")] = (
        "contracts10"
    ),
    data: DataFile = None,
    repos: Repos = None,
    wheels: Wheels = None,
    packages: Packages = None,
    requirements: Requirements = None,
    task: Annotated[list[str], typer.Option(help="only these task ids")] = [],  # noqa: B006
    limit: Annotated[int | None, typer.Option(help="only the first N tasks")] = None,
    since: Annotated[
        str | None,
        typer.Option(help="only problems released on this ISO date or after (a dated suite)"),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(help="only problems released on this ISO date or before (a dated suite)"),
    ] = None,
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
    prompt_profile: Annotated[
        str | None,
        typer.Option(
            help="benchmark tasks: codetrial or evalplus-instruct (EvalPlus's request, and "
            "its candidates judged by their definitions alone), how the first try is asked "
            "(default evalplus-instruct)"
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="wall seconds per test run (default 10; 60 for workspace, 120 for "
            "repository tasks)"
        ),
    ] = None,
    cpu_time: Annotated[int | None, typer.Option(help="CPU seconds per test run")] = None,
    time_factor: TimeFactor = TIME_FACTOR,
    time_floor: TimeFloor = TIME_FLOOR,
    rules: Rules = None,
    modes: Annotated[
        list[str],
        typer.Option(
            "--mode",
            help="question suites, repeatable: direct (no code), once (one program) or fix "
            "(a failed program fixed, --tries programs at most; the default)",
        ),
    ] = [],  # noqa: B006
    workers: Workers = 1,
    gate: Gate = None,
    runs_dir: RunsDir = Path("runs"),
    name: Annotated[
        str | None, typer.Option(help="the run directory's name (default: the time and suite)")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="base URL of the HTTP backend")] = None,
    ollama_url: Annotated[str | None, typer.Option(help="Ollama URL ($OLLAMA_HOST)")] = None,
    openai_url: Annotated[str | None, typer.Option(help="($OPENAI_BASE_URL)")] = None,
    api_key: Annotated[str | None, typer.Option(help="($OPENAI_API_KEY)")] = None,
    resume: Annotated[Path | None, typer.Option(help="finish an interrupted run")] = None,
    price: Annotated[
        list[str],
        typer.Option(
            help="MODEL=IN/OUT: what a model's tokens cost, in dollars per million prompt "
            "and completion tokens (repeatable; a model without one costs nothing)"
        ),
    ] = [],  # noqa: B006
    efficiency: Efficiency = True,
    unsafe_host_exec: UnsafeHostExec = False,
    json: Json = False,
) -> None:
    """Run a trial and print the results table and the path of report.html."""
    with Bar(out(json)) as bar:
        result = codetrial.run(
            suite,
            model,
            data=data,
            repos=repos,
            wheels=wheels,
            task_ids=task,
            limit=limit,
            since=since,
            until=until,
            samples=samples,
            temperature=temperature,
            seed=seed,
            think=think,
            num_ctx=num_ctx,
            max_tokens=max_tokens,
            repair_attempts=repair_attempts,
            tries=tries,
            edit_format=edit_format,
            prompt_profile=prompt_profile,
            timeout=timeout,
            cpu_time=cpu_time,
            time_factor=time_factor,
            time_floor=time_floor,
            rules=rules,
            workers=workers,
            gate=gate,
            runs_dir=runs_dir,
            name=name,
            base_url=base_url,
            ollama_url=ollama_url,
            openai_url=openai_url,
            api_key=api_key,
            efficiency=efficiency,
            unsafe_host_exec=unsafe_host_exec,
            modes=modes,
            resume=resume,
            progress=bar,
            packages=packages_of(packages, requirements) or (),
            prices=dict(Price.assigned(text) for text in price),
        )
    show(result, json)


COMMANDS.register("run", run)
