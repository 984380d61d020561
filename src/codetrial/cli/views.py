"""What the commands print: the results table and the task matrix, the live bar, and
the one JSON document `--json` prints instead."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from codetrial.progress import Bar as Bar  # the live bar, drawn on `out(as_json)`
from codetrial.progress import plain_console
from codetrial.records import TaskResult
from codetrial.report import EditSummary, EfficiencySummary, ModelSummary, RepositorySummary, cell
from codetrial.report.summary import Integrity, PassAtK, matrix

console = plain_console()
messages = plain_console(stderr=True)


def out(as_json: bool) -> Console:
    """Where a command's words go: standard output, or standard error under --json."""
    return messages if as_json else console


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=1) + "\n")


_STYLE = {
    "pass": "green",
    "failed": "red",
    "error": "red",
    "rejected": "yellow",
    "tampered": "bold red",
}


def _model_column(table: Table, rows: Sequence[ModelSummary]) -> None:
    """The model column: names kept on one line while they are short enough to leave
    the figures room in 80 columns, folded, never cut, when longer."""
    short = all(len(r.model) <= 26 for r in rows)
    table.add_column("model", no_wrap=short, overflow="fold")


def results_table(rows: Sequence[ModelSummary], rules: str | None = None) -> Table:
    """Each model's results; `rules`: what a run of program tasks judged by."""
    table = Table(title=f"Results, judged by {rules} rules" if rules else "Results")
    _model_column(table, rows)
    for header in (
        "first pass",
        "after repair",
        "repair successes / tries",
        "gate rejects",
        "infra errors",
    ):
        table.add_column(header, justify="right")
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


def integrity_table(rows: Sequence[ModelSummary]) -> Table:
    """What else a person must know of each model's attempts, over every sample:
    forged runs, suspect edits, replies cut off, prompts too long, and the cost."""
    table = Table(title="Forgery, limits and cost (every sample)")
    _model_column(table, rows)
    for header in Integrity.HEADERS:
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(r.model, *r.integrity.cells())
    return table


def matrix_table(
    results: Sequence[TaskResult], models: Sequence[str], task_ids: Sequence[str]
) -> Table:
    table = Table(title="Task × model (first → after repair)")
    table.add_column("task", no_wrap=True)
    for model in models:
        table.add_column(model, overflow="fold")
    for task_id, cells in matrix(results, models, task_ids):
        row = [Text(task_id)]
        for result in cells:
            if result is None:
                row.append(Text("not run", style="dim"))
                continue
            text = cell(result)
            style = _STYLE.get(text.split(" → ")[-1], "magenta")
            row.append(Text(text, style=style))
        table.add_row(*row)
    return table


def pass_at_k_table(rows: Sequence[PassAtK]) -> Table:
    table = Table(title="pass@k (95% bootstrap CI over tasks)")
    ks = list(rows[0].first) if rows else []
    for header in ("model", "samples", "stage", *(f"pass@{k}" for k in ks)):
        table.add_column(header, overflow="fold")
    for row in rows:
        for stage, values in (("first", row.first), ("after repair", row.after_repair)):
            cells = [str(values[k]) if values.get(k) else "n/a" for k in ks]
            table.add_row(row.model, str(row.samples), stage, *cells)
    return table


def edit_table(rows: Sequence[EditSummary]) -> Table:
    """aider's leaderboard columns for tasks answered in an edit format, a column per
    model."""
    table = Table(title="Edits, as aider's leaderboard reports them")
    table.add_column("")
    for r in rows:
        table.add_column(f"{r.model}\n{r.edit_format}", justify="right", overflow="fold")
    tries = len(rows[0].pass_after_try) if rows else 0
    lines: list[tuple[str, list[str]]] = [("cases", [str(r.cases) for r in rows])]
    lines += [
        (f"pass rate, try {n + 1} (95% CI)", [str(r.pass_after_try[n]) for r in rows])
        for n in range(tries)
    ]
    lines += [
        ("well-formed cases", [f"{100 * r.well_formed:.1f}%" for r in rows]),
        ("malformed edits", [str(r.malformed_edits) for r in rows]),
        ("syntax errors", [str(r.syntax_errors) for r in rows]),
        ("indentation errors", [str(r.indentation_errors) for r in rows]),
        ("test timeouts", [str(r.timeouts) for r in rows]),
        ("seconds per case", [f"{r.seconds_per_case:.1f}" for r in rows]),
        ("prompt tokens", [str(r.prompt_tokens) for r in rows]),
        ("completion tokens", [str(r.completion_tokens) for r in rows]),
        ("total cost $", [f"{r.total_cost:.4f}" for r in rows]),
        ("cost per case $", [f"{r.cost_per_case:.4f}" for r in rows]),
    ]
    for label, cells in lines:
        table.add_row(label, *cells)
    return table


def repository_table(rows: Sequence[RepositorySummary]) -> Table:
    """SWE-bench's report, a column per model."""
    return _per_model(
        "Repository tasks, as SWE-bench's harness reports them",
        rows,
        [
            ("instances", [str(r.total) for r in rows]),
            ("submitted", [str(r.submitted) for r in rows]),
            ("completed", [str(r.completed) for r in rows]),
            ("resolved", [str(r.resolved) for r in rows]),
            ("unresolved", [str(r.unresolved) for r in rows]),
            ("empty patch", [str(r.empty_patch) for r in rows]),
            ("error", [str(r.error) for r in rows]),
            ("resolved % (95% CI)", [str(r.resolved_rate) for r in rows]),
        ],
    )


def _per_model(
    title: str,
    rows: Sequence[RepositorySummary | EfficiencySummary],
    lines: list[tuple[str, list[str]]],
) -> Table:
    """A table of labelled lines, a column per model."""
    table = Table(title=title)
    table.add_column("")
    for r in rows:
        table.add_column(r.model, justify="right", overflow="fold")
    for label, cells in lines:
        table.add_row(label, *cells)
    return table


def _shown_pair(pair: Sequence[float | None], at_least: bool = False) -> str:
    """Median / worst; the worst marked as a lower bound when a cap cut it short."""
    return "-" if pair[0] is None else f"{pair[0]:.2f} / {'≥ ' if at_least else ''}{pair[1]:.2f}"


def efficiency_table(rows: Sequence[EfficiencySummary]) -> Table:
    """Passing candidates against the references, a column per model."""
    return _per_model(
        "Efficiency against the reference (ratios: median / worst)",
        rows,
        [
            ("passing candidates measured", [str(r.candidates) for r in rows]),
            ("CPU time, tests", [_shown_pair(r.tests_cpu) for r in rows]),
            ("peak memory, tests", [_shown_pair(r.tests_peak) for r in rows]),
            ("timed on the heavy input", [str(r.heavy_timed) for r in rows]),
            ("CPU time, heavy input", [_shown_pair(r.heavy_cpu, r.over_cap > 0) for r in rows]),
            ("peak memory, heavy input", [_shown_pair(r.heavy_peak) for r in rows]),
            ("over the cap on it", [str(r.over_cap) for r in rows]),
            ("disagreeing on it", [str(r.disagree) for r in rows]),
            ("not measured", [str(r.unmeasured) for r in rows]),
            ("flagged slow", [str(r.slow) for r in rows]),
        ],
    )


def instance_table(rows: Sequence[RepositorySummary]) -> Table:
    """Per instance: resolved, the FAIL_TO_PASS and PASS_TO_PASS tests that pass,
    whether the patch applied, and the seconds to patch and to test."""
    table = Table(title="Repository instances")
    table.add_column("model", overflow="fold")
    table.add_column("instance", overflow="fold")
    for name in ("resolved", "F2P", "P2P", "patch", "patch s", "tests s"):
        table.add_column(name, justify="right")
    for row in rows:
        for i in row.instances:
            patch = "empty" if i.empty_patch else ("applied" if i.patch_applied else i.outcome)
            table.add_row(
                i.model,
                i.task_id,
                "yes" if i.resolved else "no",
                "{}/{}".format(*i.fail_to_pass),
                "{}/{}".format(*i.pass_to_pass),
                patch,
                f"{i.patch_s:.2f}",
                f"{i.tests_s:.2f}",
            )
    return table
