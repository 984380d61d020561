"""`codetrial compare RUN_A RUN_B`: what changed between two runs, and is it real."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

import codetrial
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import Json
from codetrial.cli.views import console, print_json


def compare(
    run_a: Annotated[Path, typer.Argument(help="the baseline run directory")],
    run_b: Annotated[Path, typer.Argument(help="the run to compare with it")],
    out_file: Annotated[Path, typer.Option("--out", help="where to write the HTML page")] = Path(
        "compare.html"
    ),
    json: Json = False,
) -> None:
    """Per-task differences in pass@1, flipped tasks and an exact McNemar test."""
    comparison = codetrial.compare(run_a, run_b, out_file)
    if json:
        print_json(comparison.as_dict())
        return
    table = Table(title=f"{comparison.run_a} → {comparison.run_b} (first sample, first attempt)")
    for header in ("task", "A", "B", "change"):
        table.add_column(header, no_wrap=header == "task")
    for row in comparison.rows:
        if row.change:
            style = "green" if row.change == "gained" else "red"
            table.add_row(
                row.task_id,
                row.a.first.outcome.value,
                row.b.first.outcome.value,
                Text(row.change, style=style),
            )
    console.print(table)
    n = len(comparison.rows)
    console.print(
        f"pass@1 A {comparison.passed_a}/{n}, B {comparison.passed_b}/{n}; "
        f"exact McNemar p = {comparison.p_value:.4f}"
    )
    console.print(f"comparison: {out_file}", soft_wrap=True, highlight=False)


COMMANDS.register("compare", compare)
