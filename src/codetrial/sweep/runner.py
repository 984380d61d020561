"""The runner of a sweep's cells, wherever an executor runs them: each cell an ordinary
`codetrial.run` (judging in parallel as its `workers` say), each model loaded once."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from codetrial.api import SERVER_KEYS, server_endpoints
from codetrial.api import run as run_trial
from codetrial.executors import Cell
from codetrial.models import Backend, create_backend
from codetrial.progress import Progress


class CellRunner(contextlib.ExitStack):
    """Runs cells with the models loaded once, for every cell that asks for them;
    closed on exit."""

    def __init__(self) -> None:
        super().__init__()
        self._open: dict[str, Backend] = {}

    def run(self, cell: Cell, runs_dir: Path, resume: bool, progress: Progress) -> float:
        """Run the cell into `runs_dir`, or `resume` it where it stopped; its wall seconds."""
        started = time.monotonic()
        run_trial(
            **cell.options,
            runs_dir=runs_dir,
            name=cell.id,
            resume=runs_dir / cell.id if resume else None,
            progress=progress,
            backends=self._models(cell),
        )
        return time.monotonic() - started

    def _models(self, cell: Cell) -> dict[str, Backend]:
        urls = {key: cell.options.get(key) for key in SERVER_KEYS}
        key = json.dumps([cell.model, urls], sort_keys=True)
        if key not in self._open:
            backend = create_backend(cell.model, server_endpoints(**urls))
            self.callback(backend.close)
            self._open[key] = backend
        return {cell.model: self._open[key]}
