"""`codetrial evaluate SAMPLES`: judge samples written by any other tool (see
`codetrial.samples` for the formats), report per-sample verdicts and pass@k."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import codetrial
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import (
    DataFile,
    EfficiencyIfHeavy,
    Gate,
    Json,
    Ray,
    Repos,
    RunsDir,
    UnsafeHostExec,
    Wheels,
    Workers,
)
from codetrial.cli.report import show
from codetrial.cli.views import Bar, out
from codetrial.config import REPOSITORY_DEFAULTS
from codetrial.samples import CPU_S, TIMEOUT_S


def evaluate(
    samples: Annotated[
        Path, typer.Argument(help="JSONL (or .jsonl.gz) of samples, or of SWE-bench predictions")
    ],
    suite: Annotated[
        str, typer.Option(help="humaneval, humaneval+, mbpp, mbpp+, swe or a path")
    ] = "humaneval",
    data: DataFile = None,
    prompts: Annotated[
        Path | None, typer.Option(help="JSONL of {task_id, prompt} for a pool's own prompts")
    ] = None,
    repos: Repos = None,
    wheels: Wheels = None,
    workers: Workers = 2,
    timeout: Annotated[
        float | None,
        typer.Option(
            help=f"wall seconds per test run (default {TIMEOUT_S:g}; repositories "
            f"{REPOSITORY_DEFAULTS.timeout_s:g})"
        ),
    ] = None,
    cpu_time: Annotated[int, typer.Option(help="CPU seconds per sample")] = CPU_S,
    gate: Gate = None,
    runs_dir: RunsDir = Path("runs"),
    efficiency: EfficiencyIfHeavy = None,
    unsafe_host_exec: UnsafeHostExec = False,
    ray: Ray = None,
    json: Json = False,
) -> None:
    """Judge existing samples and report per-sample verdicts and pass@k; or judge a
    SWE-bench predictions file's patches (--suite swe --data INSTANCES --repos DIR)."""
    with Bar(out(json)) as bar:
        result = codetrial.evaluate(
            samples,
            suite,
            data=data,
            prompts=prompts,
            repos=repos,
            wheels=wheels,
            workers=workers,
            timeout=timeout,
            cpu_time=cpu_time,
            gate=gate,
            runs_dir=runs_dir,
            efficiency=efficiency,
            unsafe_host_exec=unsafe_host_exec,
            ray=ray,
            progress=bar,
        )
    show(result, json)


COMMANDS.register("evaluate", evaluate)
