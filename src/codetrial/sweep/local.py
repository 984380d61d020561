"""The local executor: the cells one after another in this process, each an ordinary
`codetrial.run` (judging in parallel as its `workers` say)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence

from codetrial import api
from codetrial.errors import CodetrialError, Interrupted
from codetrial.progress import Progress
from codetrial.sweep.folder import SweepFolder
from codetrial.sweep.spec import Cell

# Given a cell, its place and the number of cells to run, a context that watches it.
Watch = Callable[[Cell, int, int], contextlib.AbstractContextManager[Progress]]


def run_cell(cell: Cell, folder: SweepFolder, progress: Progress) -> float:
    """Run the cell, or resume it where it stopped; its wall seconds."""
    started = time.monotonic()
    resume = folder.run_dir(cell) if folder.resumable(cell) else None
    api.run(**cell.options, runs_dir=folder.cells, name=cell.id, resume=resume,
            progress=progress)  # fmt: skip
    return time.monotonic() - started


def run_local(cells: Sequence[Cell], folder: SweepFolder, watch: Watch) -> None:
    """Every cell in turn. A cell that fails is recorded and the others still run;
    Ctrl-C stops the sweep, keeping what finished."""
    for index, cell in enumerate(cells, start=1):
        try:
            with watch(cell, index, len(cells)) as progress:
                wall_s = run_cell(cell, folder, progress)
        except Interrupted as exc:
            raise Interrupted(f"{exc}\nthe sweep stopped at cell {cell.id}") from exc
        except CodetrialError as exc:
            folder.failed(cell, str(exc))
        else:
            folder.finished(cell, wall_s)
