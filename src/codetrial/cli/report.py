"""`codetrial report RUN_DIR`: rebuild results.json and report.html from the store alone."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import codetrial
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import Json
from codetrial.cli.views import (
    console,
    edit_table,
    efficiency_table,
    instance_table,
    integrity_table,
    matrix_table,
    pass_at_k_table,
    print_json,
    repository_table,
    results_table,
)


def show(run: codetrial.Run, as_json: bool = False) -> None:
    """Print a run's tables and the path of its report, or with `as_json` the
    document results.json holds."""
    if as_json:
        print_json(run.as_dict())
        return
    computed = run.figures()
    task_ids = list(run.manifest.task_sha256)
    if len(task_ids) <= 40:
        console.print(matrix_table(computed.results, run.models, task_ids))
    console.print(results_table(computed.rows, run.manifest.config.rules))
    console.print(integrity_table(computed.rows))
    console.print(pass_at_k_table(computed.pass_at_k))
    if computed.edits:
        console.print(edit_table(computed.edits))
    if computed.repositories:
        if len(task_ids) <= 40:
            console.print(instance_table(computed.repositories))
        console.print(repository_table(computed.repositories))
    if computed.efficiency_rows:
        console.print(efficiency_table(computed.efficiency_rows))
    console.print(f"report: {run.path / 'report.html'}", soft_wrap=True, highlight=False)


def report(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")], json: Json = False
) -> None:
    """Rebuild a run's report.html and results.json from its store."""
    run = codetrial.open_run(run_dir)
    run.report()
    show(run, json)


COMMANDS.register("report", report)
