"""`codetrial harden SUITE`: a copy of a suite whose function tasks gain hidden tests
on inputs generated from their references (see `codetrial.harden.suite`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import DataFile, UnsafeHostExec, Workers
from codetrial.cli.views import console
from codetrial.harden.suite import harden as harden_tasks
from codetrial.harden.suite import hardenable, write_suite
from codetrial.kinds import load_suite
from codetrial.kinds.function import FUNCTION


def harden(
    suite: Annotated[str, typer.Argument(help="built-in suite, benchmark or path")],
    data: DataFile = None,
    task: Annotated[list[str], typer.Option(help="only these task ids")] = [],  # noqa: B006
    tests: Annotated[int, typer.Option(help="generated cases kept per task")] = 50,
    budget: Annotated[int, typer.Option(help="inputs generated per task")] = 200,
    seed: Annotated[int, typer.Option(help="the generators' seed")] = 0,
    workers: Workers = 2,
    timeout: Annotated[float, typer.Option(help="wall seconds per reference run")] = 10.0,
    out: Annotated[Path, typer.Option(help="where the hardened suite goes")] = Path("."),
    unsafe_host_exec: UnsafeHostExec = False,
) -> None:
    """Write SUITE-hard: each task with a reference keeps its tests and gains hidden
    tests on generated inputs (type-aware mutation of its tests' inputs, and
    Hypothesis), expected outputs from the reference run in the sandbox."""
    loaded = load_suite(suite, task or None, data).only(FUNCTION, "codetrial harden")
    hardened = harden_tasks(
        loaded,
        tests=tests,
        budget=budget,
        seed=seed,
        workers=workers,
        timeout=timeout,
        unsafe_host_exec=unsafe_host_exec,
    )
    given = Path(suite)
    if given.suffix == ".jsonl":
        name = given.stem
    else:
        name = given.resolve().name if given.exists() else suite
    path = write_suite(hardened, name, out, seed)
    table = Table(title=f"{name}-hard: generated cases per task")
    for header in ("task", "seed inputs", "generated", "kept", "dropped", "heavy input"):
        table.add_column(
            header,
            justify="left" if header in ("task", "dropped") else "right",
            no_wrap=header == "task",
        )
    for h in hardened:
        dropped = ", ".join(f"{n} {why}" for why, n in sorted(h.dropped.items()) if n)
        heavy = f"{len(h.heavy):,} chars" if h.heavy else "none"
        table.add_row(h.task.id, str(h.seeds), str(h.generated), str(len(h.cases)), dropped, heavy)
    console.print(table)
    for one in loaded:
        reason = hardenable(one)
        if reason:
            console.print(f"{one.id} left out: {reason}", highlight=False)
    console.print(
        f"hardened suite: {path} (use it as --suite {path})", soft_wrap=True, highlight=False
    )


COMMANDS.register("harden", harden)
