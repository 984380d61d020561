"""`codetrial report RUN_DIR`: rebuild results.json and report.html from the store alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from codetrial.cli.views import console, matrix_table, pass_at_k_table, results_table
from codetrial.report import summarize, write_reports
from codetrial.report.summary import pass_at_k_rows
from codetrial.store import RunStore


def show(store: RunStore) -> Path:
    """Write the reports, print the tables and the report's path."""
    path = write_reports(store)
    results = store.task_results()
    models = store.manifest.config.models
    task_ids = list(store.manifest.task_sha256)
    if len(task_ids) <= 40:
        console.print(matrix_table(results, models, task_ids))
    console.print(results_table(summarize(results, models)))
    console.print(pass_at_k_table(pass_at_k_rows(results, models, task_ids)))
    console.print(f"report: {path}", soft_wrap=True, highlight=False)
    return path


def report(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Rebuild a run's report.html and results.json from its store."""
    store = RunStore.open(run_dir)
    try:
        show(store)
    finally:
        store.close()
