"""`codetrial tasks`: list a suite's tasks."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import DataFile, Json, UnsafeHostExec, Workers
from codetrial.cli.views import console, print_json
from codetrial.harden.audit import AUDIT_TIMEOUT_S, TaskAudit
from codetrial.harden.audit import audit as run_audit
from codetrial.kinds import kind_of, load_suite
from codetrial.kinds.function import FUNCTION
from codetrial.records import Visibility
from codetrial.tasks import AnyTask, known_suites


def _row(task: AnyTask) -> tuple[str, ...]:
    return (task.id, *kind_of(task).row(task), task.trust)


def tasks(
    suite: Annotated[str, typer.Option(help="built-in suite, benchmark or path")] = ("contracts10"),
    data: DataFile = None,
    task: Annotated[list[str], typer.Option(help="only these task ids")] = [],  # noqa: B006
    audit: Annotated[
        bool,
        typer.Option(help="mutation scores: how many mutants of each reference the tests kill"),
    ] = False,
    workers: Workers = 2,
    timeout: Annotated[
        float, typer.Option(help="--audit: wall seconds per mutant's test run")
    ] = AUDIT_TIMEOUT_S,
    unsafe_host_exec: UnsafeHostExec = False,
    json: Json = False,
) -> None:
    """List the tasks of a suite (built-in suites: see the table title); with --audit,
    mutate each reference and report the share of mutants its visible and hidden
    tests kill, with every surviving mutant's diff."""
    loaded = load_suite(suite, task or None, data)
    if audit:
        functions = loaded.only(FUNCTION, "codetrial tasks --audit")
        audited = run_audit(functions, workers, timeout, unsafe_host_exec)
        if json:
            print_json([a.as_dict() for a in audited])
        else:
            _show_audit(suite, audited)
        return
    table = Table(title=f"{suite} (built-in suites: {', '.join(known_suites())})")
    for header in ("task", "asks for", "tests", "reference", "verdict"):
        whole = header == "task"
        table.add_column(header, no_wrap=whole, overflow="ellipsis" if whole else "fold")
    for one in loaded:
        table.add_row(*_row(one))
    console.print(table)


def _share(killed: int | None, total: int, percent: bool = False) -> str:
    if killed is None:
        return "no tests"
    return f"{killed} ({100 * killed / total:.0f}%)" if percent and total else str(killed)


def _show_audit(suite: str, audited: list[TaskAudit]) -> None:
    table = Table(title=f"Mutants of {suite}'s references killed by its tests")
    for header in ("task", "mutants", "by visible", "by hidden", "by all", "survivors"):
        table.add_column(
            header, justify="left" if header == "task" else "right", no_wrap=header == "task"
        )
    for a in audited:
        if a.unsound:
            table.add_row(a.task_id, "", "", "", Text(a.unsound, style="red"), "")
            continue
        n = len(a.judged)
        table.add_row(
            a.task_id,
            str(n),
            _share(a.killed_by(Visibility.VISIBLE), n),
            _share(a.killed_by(Visibility.HIDDEN), n),
            _share(a.killed, n, percent=True),
            str(len(a.survivors)),
        )
    console.print(table)
    for a in audited:
        for mutant in a.survivors:
            console.print(
                f"{a.task_id}: mutant {mutant.number} ({mutant.operator}, line {mutant.line}) "
                "survives",
                style="yellow",
                highlight=False,
            )
            console.print(mutant.diff(a.reference), markup=False, highlight=False)


COMMANDS.register("tasks", tasks)
