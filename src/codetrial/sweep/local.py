"""The local executor: the cells one after another in this process, each an ordinary
`codetrial.run` (judging in parallel as its `workers` say)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from codetrial import api
from codetrial.errors import CodetrialError, Interrupted
from codetrial.models import Backend, create_backend
from codetrial.progress import Progress
from codetrial.sweep.folder import SweepFolder
from codetrial.sweep.spec import Cell

# Given a cell, its place and the number of cells to run, a context that watches it.
Watch = Callable[[Cell, int, int], contextlib.AbstractContextManager[Progress]]


class Models(contextlib.ExitStack):
    """Models loaded once, for every cell that asks for them; closed on exit."""

    def __init__(self) -> None:
        super().__init__()
        self._open: dict[str, Backend] = {}

    def of(self, cell: Cell) -> dict[str, Backend]:
        urls = {key: cell.options.get(key) for key in api.SERVER_KEYS}
        key = json.dumps([cell.model, urls], sort_keys=True)
        if key not in self._open:
            backend = create_backend(cell.model, api.server_endpoints(**urls))
            self.callback(backend.close)
            self._open[key] = backend
        return {cell.model: self._open[key]}


def run_cell(cell: Cell, runs_dir: Path, resume: bool, progress: Progress, models: Models) -> float:
    """Run the cell into `runs_dir`, or `resume` it where it stopped; its wall seconds."""
    started = time.monotonic()
    api.run(**cell.options, runs_dir=runs_dir, name=cell.id,
            resume=runs_dir / cell.id if resume else None, progress=progress,
            backends=models.of(cell))  # fmt: skip
    return time.monotonic() - started


def run_local(cells: Sequence[Cell], folder: SweepFolder, watch: Watch) -> None:
    """Every cell in turn, each model loaded once. A cell that fails is recorded and
    the others still run; Ctrl-C stops the sweep, keeping what finished."""
    with Models() as models:
        for index, cell in enumerate(cells, start=1):
            try:
                with watch(cell, index, len(cells)) as progress:
                    wall_s = run_cell(cell, folder.cells, folder.resumable(cell), progress, models)
            except Interrupted as exc:
                raise Interrupted(f"{exc}\nthe sweep stopped at cell {cell.id}") from exc
            except CodetrialError as exc:
                folder.record_failed(cell, str(exc))
            else:
                folder.record_finished(cell, wall_s)
