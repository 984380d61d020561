"""`codetrial check FILE --task ID`: judge a code file without any model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.options import DataFile, Gate, Timeout, UnsafeHostExec
from codetrial.cli.views import console
from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.extract import extract
from codetrial.gate import get_profile
from codetrial.records import Outcome
from codetrial.sandbox import open_sandbox
from codetrial.tasks import load_suite
from codetrial.verdict import judge


def check(
    file: Annotated[Path, typer.Argument(help="a Python file, or a model response")],
    task: Annotated[str, typer.Option("--task", help="the task id to judge it against")],
    suite: Annotated[str, typer.Option(help="built-in suite, benchmark or path")] = "contracts10",
    data: DataFile = None,
    gate: Gate = None,
    timeout: Timeout = 10.0,
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Extract the code from FILE as `run` does, run the gate and the task's tests on
    it; exit 0 only when it passes."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {file}: {exc}") from exc
    (the_task,) = load_suite(suite, [task], data)
    profile = get_profile(gate or the_task.policy)
    limits = Limits(timeout_s=timeout, cpu_s=max(1, int(timeout)))
    sandbox = open_sandbox(limits, unsafe_host_exec)
    try:
        isolation = sandbox.isolation
        verdict = judge(extract(text, the_task.entry_point), the_task, profile, sandbox, limits)
    finally:
        sandbox.close()
    console.print(f"isolation: {isolation}  gate: {profile.name}", highlight=False)
    style = "green" if verdict.outcome is Outcome.PASSED else "red"
    console.print(f"{task}: [bold {style}]{verdict.outcome.value}[/] {verdict.detail}")
    if verdict.tests:
        table = Table()
        for header in ("test", "visibility", "outcome", "exception"):
            table.add_column(header)
        for t in verdict.tests:
            table.add_row(t.name, t.visibility.value, t.outcome.value, t.exception_type or "")
        console.print(table)
    if verdict.outcome is not Outcome.PASSED:
        output = verdict.hidden_output or verdict.visible_output
        console.print(output, markup=False, highlight=False)
    raise typer.Exit(0 if verdict.outcome is Outcome.PASSED else 1)
