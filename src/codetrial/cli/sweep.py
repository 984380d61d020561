"""`codetrial sweep SWEEP.toml`: a grid of runs, each an ordinary run directory, and
the leaderboard over them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

import codetrial
from codetrial.cli.board import print_board
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import Json, Ray
from codetrial.cli.views import console, messages, out, print_json
from codetrial.sweep import BOARD, Plan


def sweep(
    file: Annotated[
        Path, typer.Argument(help=r"the sweep file (TOML: \[grid], \[run], \[suites.*])")
    ],
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="the sweep's folder (default sweeps/<name>)")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the cells and their estimated cost; run none")
    ] = False,
    runs_dir: Annotated[
        Path, typer.Option(help="--dry-run: earlier runs to estimate from, beside the sweep's")
    ] = Path("runs"),
    ray: Ray = None,
    json: Json = False,
) -> None:
    """Run every cell of the grid that has not finished (a cell stopped half-way is
    resumed), then print and write the board of the sweep."""
    if dry_run:
        planned = codetrial.plan_sweep(file, out_dir, runs_dir)
        if json:
            print_json(_plan_dict(planned))
        else:
            print_plan(planned)
        return
    result = codetrial.run_sweep(file, out_dir, ray=ray, progress=out(json))
    folder = result.plan.folder
    if json:
        found = result.board.as_dict() if result.board else None
        print_json(_plan_dict(result.plan) | {"board": found, "failed": result.failed})
    elif result.board is not None:
        print_board(result.board)
        console.print(f"board: {folder / BOARD}", soft_wrap=True, highlight=False)
    for cell, error in result.failed.items():
        messages.print(Text.assemble((f"cell {cell} failed:", "red"), f" {error}"))
    if result.failed:
        messages.print("fix the cause and run the sweep again: finished cells are kept")
        raise typer.Exit(1)


def _plan_dict(planned: Plan) -> dict[str, object]:
    return {
        "folder": str(planned.folder),
        "cells": [
            {
                "id": c.cell.id,
                "label": c.cell.label,
                "options": c.cell.options,
                "chains": c.cell.chains,
                "status": c.state.status,
                "done": c.state.done,
                "wall_s": c.state.wall_s,
                "error": c.state.error,
                "estimate_s": c.estimate_s,
            }
            for c in planned.cells
        ],
    }


def print_plan(planned: Plan) -> None:
    table = Table(title=f"{planned.sweep.path} → {planned.folder}")
    for header in ("#", "cell", "samples", "status", "estimate"):
        table.add_column(
            header, justify="right" if header in ("#", "samples") else "left", overflow="fold"
        )
    for index, c in enumerate(planned.cells, start=1):
        status = c.state.status
        if status == "finished" and c.state.wall_s is not None:
            status = f"finished in {c.state.wall_s:.0f} s"
        elif status in ("partial", "failed"):
            status = f"{status}, {c.state.done} stored"
        estimate = (
            "—"
            if c.state.status == "finished"
            else (
                f"{c.estimate_s:.0f} s ({c.rate.runs} earlier run(s))"
                if c.rate and c.estimate_s is not None
                else "no earlier run of this model on this suite"
            )
        )
        label = Text.assemble(c.cell.label, "\n", (c.cell.id, "dim"))
        table.add_row(str(index), label, str(c.cell.chains), status, estimate)
    console.print(table)
    known = [c.estimate_s for c in planned.cells if c.estimate_s is not None]
    left = len(planned.to_run)
    line = f"{len(planned.cells)} cells, {left} to run"
    unknown = sum(c.estimate_s is None for c in planned.cells)
    if left and unknown == left:
        line += "; no estimate: no earlier run of these models on these suites"
    elif left:
        line += f"; estimated {sum(known) / 60:.1f} min" + (
            f" for all but {unknown} cell(s) without an earlier run" if unknown else ""
        )
    console.print(line)


COMMANDS.register("sweep", sweep)
