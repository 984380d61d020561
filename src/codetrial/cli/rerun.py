"""`codetrial rerun RUN_DIR`: re-judge a stored run without any model, and say how
many verdicts came out the same."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import Gate, UnsafeHostExec, Workers
from codetrial.cli.views import console
from codetrial.rerun import Rerun, rejudge


def rerun_command(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    timeout: Annotated[
        float | None, typer.Option(help="wall seconds per test run (default: the run's)")
    ] = None,
    cpu_time: Annotated[
        int | None, typer.Option(help="CPU seconds per test run (default: the run's)")
    ] = None,
    memory_mb: Annotated[
        int | None, typer.Option(help="memory limit in MB (default: the run's)")
    ] = None,
    gate: Gate = None,
    workers: Workers = 2,
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Re-judge every stored candidate of a run under its recorded conditions (or
    those overridden here); exit 0 only when every verdict is identical."""
    result = rejudge(
        run_dir,
        timeout=timeout,
        cpu_time=cpu_time,
        memory_mb=memory_mb,
        gate=gate,
        workers=workers,
        unsafe_host_exec=unsafe_host_exec,
    )
    _show(result)
    raise typer.Exit(0 if result.identical else 1)


def _show(result: Rerun) -> None:
    if result.changed_conditions:
        console.print("conditions differ from the run's:", style="bold yellow")
        for name, (recorded, now) in result.changed_conditions.items():
            console.print(f"  {name}: {recorded} -> {now}", highlight=False)
    else:
        console.print(f"under the run's recorded conditions ({result.isolation})")
    table = Table(title="Verdicts re-judged from the store")
    for header in ("model", "stage", "judged", "identical", "different", "not re-judged"):
        table.add_column(
            header, justify="left" if header in ("model", "stage") else "right", overflow="fold"
        )
    for t in result.tallies:
        share = f" ({100 * t.identical / t.judged:.1f} %)" if t.judged else ""
        table.add_row(
            t.model,
            t.stage,
            str(t.judged),
            f"{t.identical}{share}",
            str(t.judged - t.identical),
            str(t.not_rejudged),
        )
    console.print(table)
    for d in result.differences:
        console.print(
            f"{d.model} · {d.task_id} · sample {d.sample} · attempt {d.attempt}: "
            f"{d.stored.value} -> {d.now.value}  {d.detail}",
            soft_wrap=True,
            highlight=False,
            markup=False,
        )


COMMANDS.register("rerun", rerun_command)
