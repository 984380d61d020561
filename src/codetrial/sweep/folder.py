"""A sweep's folder: the sweep file as last run, one run directory per cell under
`cells/`, and `sweep.json`, which says which cells finished, in how many seconds, and
which failed and why.

A cell is finished only once its run returned: a cell interrupted at any point, even
after its last attempt was stored, is resumed (its run directory's `--resume`) the next
time, which costs at most its report and efficiency figures again.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codetrial.errors import StoreError
from codetrial.executors import Cell as Work
from codetrial.store import MANIFEST, RunStore
from codetrial.store.artifacts import write_atomic
from codetrial.store.manifest import now
from codetrial.sweep.spec import Cell, Sweep

STATE = "sweep.json"
SWEEP_FILE = "sweep.toml"


@dataclass(frozen=True)
class CellState:
    """What is known of a cell before it runs: `done` of its `chains` are stored."""

    status: str  # "finished", "partial", "failed" or "new"
    done: int
    wall_s: float | None = None
    error: str | None = None


class SweepFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.cells = path / "cells"
        state = path / STATE
        try:
            self._state: dict[str, Any] = (
                json.loads(state.read_text(encoding="utf-8")) if state.exists() else {}
            )
        except (OSError, ValueError) as exc:
            raise StoreError(
                f"{state} cannot be read ({exc}): it says which cells finished; restore it or "
                "remove it, and every cell is resumed from its run directory"
            ) from exc
        self._state.setdefault("finished", {})
        self._state.setdefault("failed", {})

    def begin(self, sweep: Sweep) -> None:
        """Keep the sweep file beside its cells, as this run of it reads."""
        self.path.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path / SWEEP_FILE, sweep.text)

    def run_dir(self, cell: Work) -> Path:
        return self.cells / cell.id

    def resumable(self, cell: Work) -> bool:
        """Whether the cell's run started; a folder left empty before its manifest was
        written is removed, since it holds nothing."""
        run_dir = self.run_dir(cell)
        if (run_dir / MANIFEST).exists():
            return True
        if run_dir.exists():
            try:
                run_dir.rmdir()
            except OSError as exc:
                raise StoreError(
                    f"{run_dir} holds files but no {MANIFEST}: it is no run codetrial started; "
                    "move it away and run the sweep again"
                ) from exc
        return False

    def state(self, cell: Cell) -> CellState:
        finished = self._state["finished"].get(cell.id)
        if finished is not None:
            return CellState("finished", cell.chains, wall_s=finished["wall_s"])
        done = 0
        if (self.run_dir(cell) / MANIFEST).exists():
            with contextlib.suppress(StoreError), RunStore.open(self.run_dir(cell)) as store:
                done = len(store.task_results())
        error = self._state["failed"].get(cell.id)
        status = "failed" if cell.id in self._state["failed"] else "partial" if done else "new"
        return CellState(status, done, error=error)

    def record_finished(self, cell: Work, wall_s: float) -> None:
        self._state["failed"].pop(cell.id, None)
        self._state["finished"][cell.id] = {
            "wall_s": round(wall_s, 3),
            "at": now(),
            "label": cell.label,
        }
        self._save()

    def record_failed(self, cell: Work, error: str) -> None:
        self._state["failed"][cell.id] = error
        self._save()

    def finished_dirs(self, cells: Iterable[Cell]) -> list[Path]:
        return [self.run_dir(c) for c in cells if c.id in self._state["finished"]]

    def _save(self) -> None:
        write_atomic(self.path / STATE, json.dumps(self._state, indent=2, sort_keys=True))
