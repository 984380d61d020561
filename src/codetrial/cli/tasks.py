"""`codetrial tasks`: list a suite's tasks."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.options import DataFile
from codetrial.cli.views import console
from codetrial.records import Visibility
from codetrial.tasks import AnyTask, RepositoryTask, WorkspaceTask, known_suites, load_suite
from codetrial.verdict.workspace import expected_tests


def _row(task: AnyTask) -> tuple[str, ...]:
    if isinstance(task, RepositoryTask):
        tests = f"{len(task.fail_to_pass)} FAIL_TO_PASS, {len(task.pass_to_pass)} PASS_TO_PASS"
        return (task.id, f"a patch to {task.repo} at {task.base_commit[:12]}", tests,
                "gold patch", task.trust)  # fmt: skip
    if isinstance(task, WorkspaceTask):
        tests = f"{len(expected_tests(task.test_sources))} tests, unseen"
        return (task.id, "edit " + ", ".join(task.editable), tests,
                "yes" if task.reference else "no", task.trust)  # fmt: skip
    visible = len(task.tests_of(Visibility.VISIBLE))
    hidden = len(task.tests_of(Visibility.HIDDEN))
    return (task.id, task.signature.source.splitlines()[0].removesuffix(":"),
            f"{visible} visible, {hidden} hidden", "yes" if task.reference else "no",
            task.trust)  # fmt: skip


def tasks(
    suite: Annotated[str, typer.Option(help="built-in suite, benchmark or path")] = ("contracts10"),
    data: DataFile = None,
) -> None:
    """List the tasks of a suite (built-in suites: see the table title)."""
    table = Table(title=f"{suite} (built-in suites: {', '.join(known_suites())})")
    for header in ("task", "asks for", "tests", "reference", "verdict"):
        table.add_column(header)
    for task in load_suite(suite, None, data):
        table.add_row(*_row(task))
    console.print(table)
