"""`codetrial report RUN_DIR`: rebuild results.json and report.html from the store alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from codetrial.cli.views import (
    console,
    edit_table,
    instance_table,
    matrix_table,
    pass_at_k_table,
    repository_table,
    results_table,
)
from codetrial.report import figures, write_reports
from codetrial.store import RunStore


def show(store: RunStore) -> Path:
    """Write the reports, print the tables and the report's path."""
    computed = figures(store)
    path = write_reports(store, computed)
    models = store.manifest.config.models
    task_ids = list(store.manifest.task_sha256)
    if len(task_ids) <= 40:
        console.print(matrix_table(computed.results, models, task_ids))
    console.print(results_table(computed.rows))
    console.print(pass_at_k_table(computed.pass_at_k))
    if computed.edits:
        console.print(edit_table(computed.edits))
    if computed.repositories:
        if len(task_ids) <= 40:
            console.print(instance_table(computed.repositories))
        console.print(repository_table(computed.repositories))
    console.print(f"report: {path}", soft_wrap=True, highlight=False)
    return path


def report(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Rebuild a run's report.html and results.json from its store."""
    store = RunStore.open(run_dir)
    try:
        show(store)
    finally:
        store.close()
