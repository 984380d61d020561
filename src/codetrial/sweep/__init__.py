"""A grid of runs: a sweep file expanded into cells, each an ordinary run directory in
the sweep's folder, run by an executor, then one leaderboard over them all (see
`codetrial.sweep.grid`)."""

from codetrial.sweep.grid import (
    BOARD,
    Plan,
    SweepResult,
    plan_sweep,
    run_sweep,
)
from codetrial.sweep.spec import Cell, Sweep, load_sweep

__all__ = [
    "BOARD",
    "Cell",
    "Plan",
    "Sweep",
    "SweepResult",
    "load_sweep",
    "plan_sweep",
    "run_sweep",
]
