"""Rich renderings shared by the commands: the results table and the task matrix."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from codetrial.records import TaskResult
from codetrial.report import ModelSummary, cell
from codetrial.report.summary import PassAtK, matrix

console = Console()

_STYLE = {"pass": "green", "failed": "red", "error": "red", "rejected": "yellow"}


def results_table(rows: Sequence[ModelSummary]) -> Table:
    table = Table(title="Results")
    for header in ("model", "first pass", "after repair", "repair successes / tries",
                   "gate rejects", "infra errors"):  # fmt: skip
        table.add_column(header, justify="left" if header == "model" else "right")
    for r in rows:
        table.add_row(
            r.model,
            f"{r.first_pass}/{r.tasks}",
            f"{r.after_repair}/{r.tasks}",
            f"{r.repair_successes}/{r.repair_tries}",
            str(r.gate_rejects),
            str(r.infra_errors),
        )
    return table


def matrix_table(
    results: Sequence[TaskResult], models: Sequence[str], task_ids: Sequence[str]
) -> Table:
    table = Table(title="Task × model (first → after repair)")
    table.add_column("task")
    for model in models:
        table.add_column(model)
    for task_id, cells in matrix(results, models, task_ids):
        row = [task_id]
        for result in cells:
            if result is None:
                row.append("[dim]not run[/]")
                continue
            text = cell(result)
            style = _STYLE.get(text.split(" → ")[-1], "magenta")
            row.append(f"[{style}]{text}[/]")
        table.add_row(*row)
    return table


def pass_at_k_table(rows: Sequence[PassAtK]) -> Table:
    table = Table(title="pass@k (95% bootstrap CI over tasks)")
    ks = list(rows[0].first) if rows else []
    for header in ("model", "samples", "stage", *(f"pass@{k}" for k in ks)):
        table.add_column(header)
    for row in rows:
        for stage, values in (("first", row.first), ("after repair", row.after_repair)):
            cells = [str(values[k]) if values.get(k) else "n/a" for k in ks]
            table.add_row(row.model, str(row.samples), stage, *cells)
    return table
