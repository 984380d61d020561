"""Executors: where the work of a sweep, or of judging a samples file, is done. `local`
does it here, in this process; `ray` on the nodes of a Ray cluster that is already
running. A sweep hands an executor its cells and `codetrial evaluate` its samples; both
find it in `EXECUTORS`, by name.

An executor sits below the API that runs a cell: it knows a cell only as `Cell`, keeps a
sweep's books through its `Folder`, and runs cells with a `Runner` the sweep gives it,
opened once where cells run (here, or in each actor on a cluster).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from codetrial.config import RunConfig
from codetrial.progress import Progress
from codetrial.records import Verdict
from codetrial.registry import Registry
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool

# A sample to judge: its line of the samples file, its task, and the program.
Sample = tuple[dict[str, Any], Task, str]


class Cell(Protocol):
    """A sweep's cell, as an executor sees it: `id` names its run directory, cells of
    one `model` share that model once it is loaded, and `options` are the run's (its
    `workers` are the sandboxes it judges with)."""

    @property
    def id(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def options(self) -> Mapping[str, Any]: ...


class Folder(Protocol):
    """A sweep's folder: every cell's run directory under `cells`, and which finished."""

    path: Path
    cells: Path

    def run_dir(self, cell: Cell) -> Path: ...

    def resumable(self, cell: Cell) -> bool: ...

    def record_finished(self, cell: Cell, wall_s: float) -> None: ...

    def record_failed(self, cell: Cell, error: str) -> None: ...


class Runner(Protocol):
    """Runs cells one at a time; closing it frees what they loaded."""

    def run(self, cell: Cell, runs_dir: Path, resume: bool, progress: Progress) -> float:
        """Run `cell` into `runs_dir`, or `resume` it there; its wall seconds."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Cells:
    """A sweep's cells to run into its `folder`, with a `runner` opened where they run;
    `resources`: what an actor asks for (`cpus`, `memory_mb`: the sweep file's [ray]
    table); `remaining`: the samples the cells have still to draw."""

    cells: Sequence[Cell]
    folder: Folder
    runner: Callable[[], Runner]
    resources: Mapping[str, float]
    remaining: int


class Executor(Protocol):
    def run_cells(self, work: Cells, console: Console | None) -> None:
        """Run every cell, recording in the folder each that finished or failed: a cell
        that fails does not stop the others. Ctrl-C raises Interrupted, keeping what
        finished. Progress is drawn on `console`, if any."""
        ...

    def verdicts(
        self, samples: Sequence[Sample], config: RunConfig, pool: JudgePool
    ) -> Iterator[Verdict]:
        """Each sample's verdict, in order, under the gate profile and the limits of
        `config`: judged in `pool`, this process's, or in pools like it elsewhere. A
        sandbox fault is that sample's infra_error."""
        ...


# A name's factory: given where the executor is to run its work (a Ray cluster's
# address, or "auto" for the one started on this machine; the local executor takes None).
# The built-in executors are declared in the package's __init__, which they do not import.
EXECUTORS: Registry[Callable[[str | None], Executor]] = Registry("executor")


def executor(ray: str | None) -> Executor:
    """The local executor, or with `ray` (a cluster's address, or "auto") Ray's."""
    return EXECUTORS.get("local" if ray is None else "ray")(ray)
