"""`codetrial evaluate SAMPLES`: judge samples written by any other tool (see
`codetrial.evaluate` for the formats), report per-sample verdicts and pass@k."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from codetrial.cli.options import DataFile, Gate, RunsDir, Timeout, UnsafeHostExec, Workers
from codetrial.cli.report import show
from codetrial.cli.views import console
from codetrial.evaluate import CPU_S, TIMEOUT_S, SamplesJob, judge_samples
from codetrial.records import Outcome, Verdict
from codetrial.store import RunStore


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
    timeout: Timeout = TIMEOUT_S,
    cpu_time: Annotated[int, typer.Option(help="CPU seconds per sample")] = CPU_S,
    gate: Gate = None,
    runs_dir: RunsDir = Path("runs"),
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Judge existing samples and report per-sample verdicts and pass@k."""
    job = SamplesJob(samples, suite, data, prompts, workers, timeout, cpu_time, gate, runs_dir,
                     unsafe_host_exec)  # fmt: skip
    store = judged_with_progress(job)
    try:
        show(store)
    finally:
        store.close()


def judged_with_progress(job: SamplesJob) -> RunStore:
    """judge_samples with the run directory named first and a progress bar."""
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

        return judge_samples(job, announce=announce, progress=advance)
