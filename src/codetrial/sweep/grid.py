"""A grid of runs: a sweep file expanded into cells, each an ordinary run directory in
the sweep's folder, run by an executor, then one leaderboard over them all.

Running a sweep again skips the cells that finished and resumes the others, so a
sweep stopped by Ctrl-C, a crash or a dead server goes on where it was.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from codetrial.errors import Interrupted
from codetrial.executors import Cells, executor
from codetrial.progress import plain_console
from codetrial.report.board import Board, board, write_board
from codetrial.sweep.estimate import Rate, rates
from codetrial.sweep.folder import CellState, SweepFolder
from codetrial.sweep.runner import CellRunner
from codetrial.sweep.spec import Cell, Sweep, load_sweep

BOARD = "board.html"


def default_folder(path: Path) -> Path:
    """Where a sweep file's cells go unless told: sweeps/<the file's name>."""
    return Path("sweeps") / path.stem


@dataclass(frozen=True)
class PlannedCell:
    cell: Cell
    state: CellState
    rate: Rate | None

    @property
    def estimate_s(self) -> float | None:
        """Seconds still to go, from earlier runs (0 once finished)."""
        if self.state.status == "finished":
            return 0.0
        if self.rate is None:
            return None
        return self.rate.per_chain * (self.cell.chains - self.state.done)


@dataclass(frozen=True)
class Plan:
    """A sweep's cells with what is done of each and what the rest should cost."""

    sweep: Sweep
    folder: Path
    cells: list[PlannedCell]
    recorded: SweepFolder = dataclasses.field(repr=False, compare=False)

    @property
    def remaining(self) -> int:
        """The samples still to draw, over every cell not finished."""
        return sum(c.cell.chains - c.state.done for c in self.cells if c.state.status != "finished")

    @property
    def to_run(self) -> list[Cell]:
        return [c.cell for c in self.cells if c.state.status != "finished"]


def plan_sweep(
    path: Path | str, out: Path | str | None = None, runs_dir: Path | str | None = "runs"
) -> Plan:
    """The sweep file's cells, checked, with their state in the sweep's folder `out`
    and estimates from the runs stored there and under `runs_dir` (None: none)."""
    loaded = load_sweep(Path(path))
    place = Path(out) if out is not None else default_folder(loaded.path)
    folder = SweepFolder(place)
    wanted = {(c.model, c.suite) for c in loaded.cells}
    known = {} if runs_dir is None else rates([folder.cells, Path(runs_dir)], wanted)
    cells = [
        PlannedCell(cell, folder.state(cell), known.get((cell.model, cell.suite)))
        for cell in loaded.cells
    ]
    return Plan(loaded, place, cells, folder)


@dataclass(frozen=True)
class SweepResult:
    """A sweep run: every cell's state after it, and the board of the finished ones
    (written to board.html in the sweep's folder)."""

    plan: Plan
    board: Board | None

    @property
    def failed(self) -> dict[str, str]:
        return {
            c.cell.id: c.state.error or "" for c in self.plan.cells if c.state.status == "failed"
        }


def run_sweep(
    path: Path | str,
    out: Path | str | None = None,
    *,
    ray: str | None = None,
    progress: bool | Console = False,
) -> SweepResult:
    """Run the sweep file's unfinished cells in its folder `out` (default
    sweeps/<name>), here one after another or, with `ray` (a cluster's address, or
    "auto"), as Ray work; then write the board of every finished cell. `progress`:
    True draws bars on standard error, a Console draws them there. A cell that fails
    (a server down, a broken task) is recorded in the result's `failed` and retried
    when the sweep runs again."""
    before = plan_sweep(path, out, runs_dir=None)
    folder = before.recorded
    folder.begin(before.sweep)
    console = progress if isinstance(progress, Console) else None
    if progress is True:
        console = plain_console(stderr=True)
    work = Cells(before.to_run, folder, CellRunner, before.sweep.resources, before.remaining)
    try:
        executor(ray).run_cells(work, console)
    except (Interrupted, KeyboardInterrupt) as exc:
        again = f"codetrial sweep {before.sweep.path}" + (f" --out {before.folder}" if out else "")
        again += f" --ray {ray}" if ray is not None else ""
        raise Interrupted(f"{exc}\nfinished cells are kept; continue with: {again}") from exc
    now = [dataclasses.replace(c, state=folder.state(c.cell)) for c in before.cells]
    after = Plan(before.sweep, before.folder, now, folder)
    finished = folder.finished_dirs(before.sweep.cells)
    found = board(finished) if finished else None
    if found is not None:
        write_board(found, before.folder / BOARD)
    return SweepResult(after, found)
