"""`codetrial evaluate SAMPLES`: judge samples written by any other tool (see
`codetrial.evaluate` for the formats), report per-sample verdicts and pass@k."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from codetrial.cli.options import DataFile, Gate, Repos, RunsDir, UnsafeHostExec, Wheels, Workers
from codetrial.cli.report import show
from codetrial.cli.views import console
from codetrial.config import REPOSITORY_DEFAULTS
from codetrial.evaluate import CPU_S, TIMEOUT_S, SamplesJob, judge_samples
from codetrial.predictions import PredictionsJob, is_predictions, judge_predictions
from codetrial.records import Outcome, Verdict
from codetrial.store import RunStore


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
            help=f"wall seconds per test run [default: {TIMEOUT_S:g}; repositories "
            f"{REPOSITORY_DEFAULTS.timeout_s:g}]"
        ),
    ] = None,
    cpu_time: Annotated[int, typer.Option(help="CPU seconds per sample")] = CPU_S,
    gate: Gate = None,
    runs_dir: RunsDir = Path("runs"),
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Judge existing samples and report per-sample verdicts and pass@k; or judge a
    SWE-bench predictions file's patches (--suite swe --data INSTANCES --repos DIR)."""
    if is_predictions(samples):
        patches = PredictionsJob(
            samples, suite, data, repos, wheels, workers,
            REPOSITORY_DEFAULTS.timeout_s if timeout is None else timeout, runs_dir,
            unsafe_host_exec,
        )  # fmt: skip
        store = judged_with_progress(lambda **hooks: judge_predictions(patches, **hooks))
    else:
        job = SamplesJob(samples, suite, data, prompts, workers, TIMEOUT_S if timeout is None
                         else timeout, cpu_time, gate, runs_dir, unsafe_host_exec)  # fmt: skip
        store = judged_with_progress(lambda **hooks: judge_samples(job, **hooks))
    try:
        show(store)
    finally:
        store.close()


def judged_with_progress(judging: Callable[..., RunStore]) -> RunStore:
    """`judging(announce=, progress=)` (judge_samples or judge_predictions) with the run
    directory named first and a progress bar."""
    columns = (
        TextColumn("judging"), BarColumn(), MofNCompleteColumn(),
        TextColumn("passes {task.fields[passes]}"), TimeElapsedColumn(),
    )  # fmt: skip
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("judging", total=None, passes=0)
        passes = 0

        def announce(run_dir: Path, count: int) -> None:
            console.print(f"run directory: {run_dir}", soft_wrap=True, highlight=False)
            progress.update(bar, total=count)

        def advance(verdict: Verdict) -> None:
            nonlocal passes
            passes += verdict.outcome is Outcome.PASSED
            progress.update(bar, advance=1, passes=passes)

        return judging(announce=announce, progress=advance)
