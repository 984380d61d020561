"""`codetrial ask`: a question about data files, answered by programs the model writes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import codetrial
from codetrial import environments
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import (
    Json,
    Packages,
    Requirements,
    RunsDir,
    UnsafeHostExec,
    Wheels,
    packages_of,
)
from codetrial.cli.views import console, out, print_json
from codetrial.records import AttemptRecord
from codetrial.tasks.questions import DATA_PACKAGES


class Rounds:
    """Progress of a question: a line per round as it is stored."""

    def __init__(self, json: bool) -> None:
        self.console = out(json)

    def start(self, run_dir: Path, total: int) -> None:
        self.console.print(f"run directory: {run_dir}", soft_wrap=True, highlight=False)

    def advance(self, record: AttemptRecord) -> None:
        program = record.program
        what = f"round {record.attempt + 1}: {record.outcome.value}"
        if program is not None and program.raised:
            what += f" ({program.raised.get('type')}: {program.raised.get('message', '')[:120]})"
        elif program is not None and program.files:
            what += f" (wrote {', '.join(program.files)})"
        self.console.print(
            f"{what}, {record.generation_s + record.execution_s:.1f} s", highlight=False
        )


def ask(
    question: Annotated[str, typer.Argument(help="the question, in words")],
    file: Annotated[
        list[Path],
        typer.Option("--file", "-f", help="a data file (repeatable), read-only in /data"),
    ] = [],  # noqa: B006
    model: Annotated[str, typer.Option("--model", "-m")] = "embedded",
    rounds: Annotated[int, typer.Option(help="programs at most: a failed one is fixed")] = 3,
    packages: Packages = None,
    requirements: Requirements = None,
    wheels: Wheels = None,
    temperature: Annotated[float, typer.Option()] = 0.0,
    seed: Annotated[int, typer.Option()] = 42,
    timeout: Annotated[float | None, typer.Option(help="wall seconds per program (30)")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="max new tokens (768)")] = None,
    runs_dir: RunsDir = Path("runs"),
    base_url: Annotated[str | None, typer.Option(help="base URL of the HTTP backend")] = None,
    unsafe_host_exec: UnsafeHostExec = False,
    json: Json = False,
) -> None:
    """Ask QUESTION about the --file data: the model writes a Python program, the
    sandbox runs it (the files read-only in /data, numpy, pandas and matplotlib
    importable, no network), a failed program goes back with its error, and the model
    answers from what the program printed. Every round, chart and the answer are
    stored in a run directory with its report."""
    chosen = packages_of(packages, requirements) or DATA_PACKAGES
    if environments.cached(chosen) is None:
        source = f"the wheels in {wheels}" if wheels else "the package index"
        where = environments.environments_dir()
        out(json).print(
            f"building the package environment {' '.join(chosen)} from {source} "
            f"(once; cached in {where})",
            highlight=False,
        )
    result = codetrial.ask(
        question,
        file,
        model,
        rounds=rounds,
        packages=chosen,
        wheels=wheels,
        temperature=temperature,
        seed=seed,
        timeout=timeout,
        max_tokens=max_tokens,
        runs_dir=runs_dir,
        base_url=base_url,
        unsafe_host_exec=unsafe_host_exec,
        progress=Rounds(json),
    )
    report = result.report()
    last = result.results()[-1].final
    program = last.program
    answer = program.answer if program is not None else None
    if json:
        files = program.files if program else []
        print_json(
            {
                "run_dir": str(result.path),
                "report": str(report),
                "answer": answer,
                "outcome": last.outcome.value,
                "files": files,
            }
        )
        return
    if answer is None:
        console.print(f"no answer: {last.outcome.value} ({last.detail})", highlight=False)
    else:
        console.print(f"answer: {answer}", highlight=False)
    console.print(f"report: {report}", soft_wrap=True, highlight=False)


COMMANDS.register("ask", ask)
