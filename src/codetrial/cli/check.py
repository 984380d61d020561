"""`codetrial check FILE --task ID`: judge a code file without any model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.views import console
from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.gate import get_profile
from codetrial.records import Candidate, Outcome
from codetrial.sandbox import open_sandbox
from codetrial.tasks import load_suite
from codetrial.verdict import judge


def check(
    file: Annotated[Path, typer.Argument(help="a Python file, or a model response")],
    task: Annotated[str, typer.Option("--task", help="the task id to judge it against")],
    suite: Annotated[str, typer.Option(help="built-in suite or folder")] = "contracts10",
    gate: Annotated[str, typer.Option(help="gate profile")] = "builtins-only",
    timeout: Annotated[float, typer.Option(help="wall seconds per test run")] = 10.0,
    unsafe_host_exec: Annotated[
        bool, typer.Option(help="run the code without namespaces (rlimits only)")
    ] = False,
) -> None:
    """Run the gate and the task's tests on FILE; exit 0 only when it passes."""
    try:
        code = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {file}: {exc}") from exc
    (the_task,) = load_suite(suite, [task])
    limits = Limits(timeout_s=timeout, cpu_s=max(1, int(timeout)))
    sandbox = open_sandbox(limits, unsafe_host_exec)
    try:
        verdict = judge(
            Candidate(raw=code, code=code if code.strip() else None),
            the_task,
            get_profile(gate),
            sandbox,
            limits,
        )
    finally:
        sandbox.close()
    console.print(f"isolation: {sandbox.kind}", highlight=False)
    style = "green" if verdict.outcome is Outcome.PASSED else "red"
    console.print(f"{task}: [bold {style}]{verdict.outcome.value}[/] {verdict.detail}")
    if verdict.tests:
        table = Table()
        for header in ("test", "visibility", "outcome", "exception"):
            table.add_column(header)
        for t in verdict.tests:
            table.add_row(t.name, t.visibility.value, t.outcome, t.exception_type or "")
        console.print(table)
    if verdict.outcome is not Outcome.PASSED:
        output = verdict.hidden_output or verdict.visible_output
        console.print(output, markup=False, highlight=False)
    raise typer.Exit(0 if verdict.outcome is Outcome.PASSED else 1)
