"""`codetrial compare RUN_A RUN_B`: what changed between two runs, and is it real."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.views import console
from codetrial.report.compare import compare as compare_runs
from codetrial.report.compare import write_comparison
from codetrial.store import RunStore


def compare(
    run_a: Annotated[Path, typer.Argument(help="the baseline run directory")],
    run_b: Annotated[Path, typer.Argument(help="the run to compare with it")],
    out: Annotated[Path, typer.Option(help="where to write the HTML page")] = Path("compare.html"),
) -> None:
    """Per-task differences in pass@1, flipped tasks and an exact McNemar test."""
    a, b = RunStore.open(run_a), RunStore.open(run_b)
    try:
        comparison = compare_runs(a, b)
    finally:
        a.close()
        b.close()
    table = Table(title=f"{comparison.run_a} → {comparison.run_b} (first sample, first attempt)")
    for header in ("task", "A", "B", "change"):
        table.add_column(header)
    for row in comparison.rows:
        if row.change:
            style = "green" if row.change == "gained" else "red"
            table.add_row(row.task_id, row.a.first.outcome.value, row.b.first.outcome.value,
                          f"[{style}]{row.change}[/]")  # fmt: skip
    console.print(table)
    n = len(comparison.rows)
    console.print(
        f"pass@1 A {comparison.passed_a}/{n}, B {comparison.passed_b}/{n}; "
        f"exact McNemar p = {comparison.p_value:.4f}"
    )
    path = write_comparison(comparison, out)
    console.print(f"comparison: {path}", soft_wrap=True, highlight=False)
