"""`codetrial board DIR...`: the leaderboard of every run found in the folders given."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

import codetrial
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import Json
from codetrial.cli.views import console, print_json
from codetrial.errors import ConfigError
from codetrial.metrics import Estimate
from codetrial.report.board import Board
from codetrial.report.charts import shown_size
from codetrial.report.summary import Integrity


def board(
    places: Annotated[
        list[Path], typer.Argument(help="run directories, sweep folders or folders of runs")
    ],
    out_file: Annotated[Path, typer.Option("--out", help="where to write the HTML page")] = Path(
        "board.html"
    ),
    size: Annotated[
        list[str],
        typer.Option(help="MODEL=SIZE, a parameter count the backend does not say (1.5B)"),
    ] = [],  # noqa: B006
    json: Json = False,
) -> None:
    """Models × suites: pass@1 with its interval, after repair, seeds, speed, memory,
    tampered, suspect, cut-off and overflowed attempts, and the paired test against the
    row above; sortable HTML with a size-versus-score chart."""
    sizes = {}
    for given in size:
        model, sep, value = given.rpartition("=")
        if not sep or not model:
            raise ConfigError(f"--size {given}: write MODEL=SIZE, e.g. --size openai/gpt-x=8B")
        sizes[model] = value
    found = codetrial.board(places, sizes)
    codetrial.write_board(found, out_file)
    if json:
        print_json(found.as_dict())
        return
    print_board(found)
    console.print(f"board: {out_file}", soft_wrap=True, highlight=False)


def _percent(estimate: Estimate) -> str:
    return f"{100 * estimate.value:.1f} [{100 * estimate.low:.0f}, {100 * estimate.high:.0f}]"


def print_board(found: Board) -> None:
    for suite, rows in found.suites.items():
        table = Table(title=f"{suite}: pass@1 % with 95% CI, seeds pooled")
        for header in (
            "#",
            "model",
            "size",
            "pass@1",
            "repaired",
            "seeds ± sd",
            "tok/s",
            "s/sample",
            "MB",
            *Integrity.HEADERS,
            "vs above",
        ):
            table.add_column(
                header, justify="left" if header == "model" else "right", overflow="fold"
            )
        for rank, row in enumerate(rows, start=1):
            seeds, paired = row.over_seeds, row.paired
            table.add_row(
                str(rank),
                row.label,
                shown_size(row.parameters) if row.parameters else "?",
                _percent(row.pass_at_1),
                _percent(row.after_repair),
                f"{100 * seeds[0]:.1f} ± {100 * seeds[1]:.1f}" if seeds else "",
                f"{row.tokens_per_s:.0f}" if row.tokens_per_s else "?",
                f"{row.seconds_per_sample:.2f}",
                f"{row.memory_mb:.0f}" if row.memory_mb else "?",
                *row.integrity.cells(),
                f"-{paired.above_better}/+{paired.above_worse} p={paired.p_value:.2f}"
                if paired
                else "",
            )
        console.print(table)


COMMANDS.register("board", board)
