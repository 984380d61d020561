"""`codetrial check`: judge a file, or every task's reference, without any model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from codetrial.checks import Checked, Where, check_file, check_references
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import (
    DataFile,
    Gate,
    Repos,
    Rules,
    TimeFactor,
    TimeFloor,
    UnsafeHostExec,
    Wheels,
    Workers,
)
from codetrial.cli.views import console
from codetrial.config import TIME_FACTOR, TIME_FLOOR
from codetrial.errors import ConfigError
from codetrial.records import Outcome, Verdict


def _judging(isolation: str, profile: str, rules: str | None) -> None:
    judged_by = f"  rules: {rules}" if rules else ""
    console.print(f"isolation: {isolation}  gate: {profile}{judged_by}", highlight=False)


def _show(task_id: str, verdict: Verdict) -> None:
    style = "green" if verdict.outcome is Outcome.PASSED else "red"
    console.print(
        Text.assemble(
            f"{task_id}: ", (verdict.outcome.value, f"bold {style}"), f" {verdict.detail}"
        )
    )
    if verdict.tests:
        table = Table()
        for header in ("test", "visibility", "outcome", "exception"):
            table.add_column(header, overflow="fold")
        for t in verdict.tests:
            table.add_row(t.name, t.visibility.value, t.outcome.value, t.exception_type or "")
        console.print(table)
    if verdict.outcome is not Outcome.PASSED:
        output = verdict.hidden_output or verdict.visible_output
        console.print(output, markup=False, highlight=False)


def _cell(verdict: Verdict | None, should_pass: bool) -> Text:
    if verdict is None:
        return Text("no reference" if should_pass else "", style="dim")
    good = (verdict.outcome is Outcome.PASSED) == should_pass
    return Text(verdict.outcome.value, style="green" if good else "red")


def _references_table(checked: list[Checked]) -> Table:
    table = Table(title="References and starting files")
    for header in ("task", "reference", "files as given", "tests catch nothing", "flaky"):
        table.add_column(header, no_wrap=header == "task", overflow="fold")
    for row in checked:
        table.add_row(
            row.task_id,
            _cell(row.reference, True),
            _cell(row.start, False),
            Text(", ".join(row.caught_nothing), style="red"),
            Text(", ".join(row.flaky), style="red"),
        )
    return table


def check(
    file: Annotated[
        Path | None,
        typer.Argument(help="a Python file, a model's response, or a repository task's patch"),
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="the task id to judge FILE against")
    ] = None,
    references: Annotated[
        bool, typer.Option(help="judge every task's reference instead of a file")
    ] = False,
    suite: Annotated[str, typer.Option(help="built-in suite, benchmark or path")] = "contracts10",
    data: DataFile = None,
    repos: Repos = None,
    wheels: Wheels = None,
    edit_format: Annotated[
        str, typer.Option(help="workspace tasks: the format of FILE (whole, diff, udiff)")
    ] = "whole",
    gate: Gate = None,
    prompt_profile: Annotated[
        str | None,
        typer.Option(
            help="benchmark tasks: the profile whose extraction FILE's code goes through "
            "(default evalplus-instruct: its definitions alone; codetrial: all of it)"
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="wall seconds per test run (default 10; 60 for workspace tasks)"),
    ] = None,
    time_factor: TimeFactor = TIME_FACTOR,
    time_floor: TimeFloor = TIME_FLOOR,
    rules: Rules = None,
    workers: Workers = 1,
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Judge FILE against --task as `run` judges a response (its code extracted, or its
    edit applied to a workspace task's files; a repository task's FILE is a patch);
    exit 0 only when it passes. With --references, judge every task's reference
    solution and, for workspace tasks, the files as given (repository tasks: the gold
    patch, and the tests at the base commit); for function tasks, also trivial bodies
    (pass, return None, return the first argument, raise NotImplementedError), which
    the tests must fail, and the reference twice more, to find a test whose outcome
    changes; exit 0 only when every reference passes, no starting files or trivial
    body do, and no test is flaky."""
    if references == (file is not None) or (file is not None and task is None):
        raise ConfigError("give FILE with --task ID, or --references")
    if references and prompt_profile is not None:
        raise ConfigError("--prompt-profile is for a FILE: references are judged as written")
    where = Where(
        suite=suite,
        data=data,
        repos=repos,
        wheels=wheels,
        gate=gate,
        timeout=timeout,
        time_factor=time_factor,
        time_floor=time_floor,
        rules=rules,
        workers=workers,
        unsafe_host_exec=unsafe_host_exec,
    )
    if file is None:
        isolation, profile, judged_by, checked = check_references(where)
        _judging(isolation, profile, judged_by)
        console.print(_references_table(checked))
        raise typer.Exit(0 if all(row.sound for row in checked) else 1)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {file}: {exc}") from exc
    isolation, profile, judged_by, verdict = check_file(
        text, task or "", where, edit_format, prompt_profile
    )
    _judging(isolation, profile, judged_by)
    _show(task or "", verdict)
    raise typer.Exit(0 if verdict.outcome is Outcome.PASSED else 1)


COMMANDS.register("check", check)
