"""`codetrial review RUN_DIR`: the tasks still failing after repair, queued for a
person, and a person's decision about one of them recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

import codetrial
from codetrial.cli.commands import COMMANDS
from codetrial.cli.views import console
from codetrial.errors import ConfigError
from codetrial.report.review import QUEUE_PAGE, Queue


def review(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    decide: Annotated[
        str | None,
        typer.Option(help="record a decision about this queued task instead of writing the queue"),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="with --decide: the model (as the report names it)")
    ] = None,
    sample: Annotated[int, typer.Option(help="with --decide: the sample")] = 0,
    accept: Annotated[
        bool | None,
        typer.Option(
            "--accept/--reject",
            help="with --decide: the person accepts the last try, or rejects it",
            show_default=False,
        ),
    ] = None,
    note: Annotated[str, typer.Option(help="with --decide: why")] = "",
    by: Annotated[
        str | None, typer.Option(help="with --decide: who decides (default: $USER)")
    ] = None,
) -> None:
    """Write RUN_DIR/review/queue.jsonl and queue.md: each task a model still fails
    after repair, per sample, with what was asked, the last code and its failure. With
    --decide, append a person's decision to review/decisions.jsonl; no verdict changes."""
    if decide is None:
        if model is not None or accept is not None or note or by is not None:
            raise ConfigError("--model, --accept/--reject, --note and --by go with --decide TASK")
        _show(codetrial.review(run_dir))
        return
    if model is None or accept is None:
        raise ConfigError("--decide TASK needs --model MODEL and --accept or --reject")
    decision = codetrial.decide(
        run_dir, decide, model=model, sample=sample, accept=accept, note=note, by=by
    )
    console.print(
        f"{decision.decision}: {decision.task_id} ({decision.model}, sample {decision.sample}) "
        f"by {decision.by} at {decision.at}",
        soft_wrap=True,
        highlight=False,
        markup=False,
    )


def _show(queue: Queue) -> None:
    table = Table(title="Still failing after repair: for a person to look at")
    for header in ("model", "task", "sample", "tries", "last outcome"):
        table.add_column(header, justify="right" if header == "sample" else "left")
    for item in queue.items:
        table.add_row(
            item.model, item.task_id, str(item.sample), " → ".join(item.outcomes), item.outcomes[-1]
        )
    console.print(table)
    if queue.left_out:
        console.print(f"left out: {queue.left_out} (every try an infra_error)")
    console.print(f"queue: {queue.folder / QUEUE_PAGE}", soft_wrap=True, highlight=False)


COMMANDS.register("review", review)
