"""`codetrial tasks`: list a suite's tasks."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.options import DataFile
from codetrial.cli.views import console
from codetrial.records import Visibility
from codetrial.tasks import known_suites, load_suite


def tasks(
    suite: Annotated[str, typer.Option(help="built-in suite or folder of task folders")] = (
        "contracts10"
    ),
    data: DataFile = None,
) -> None:
    """List the tasks of a suite (built-in suites: see the table title)."""
    table = Table(title=f"{suite} (built-in suites: {', '.join(known_suites())})")
    for header in ("task", "function", "visible tests", "hidden tests", "reference"):
        table.add_column(header)
    for task in load_suite(suite, None, data):
        table.add_row(
            task.id,
            task.signature.source.splitlines()[0].removesuffix(":"),
            str(len(task.tests_of(Visibility.VISIBLE))),
            str(len(task.tests_of(Visibility.HIDDEN))),
            "yes" if task.reference else "no",
        )
    console.print(table)
