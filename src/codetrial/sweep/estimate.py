"""What a cell will cost, from the runs of the same model on the same suite that
codetrial stored before: seconds per chain (a sample's first attempt and its repairs),
times the chains the cell has still to run. A run that was a finished sweep cell
counts with its wall seconds; any other with its attempts' generation and judging
seconds, which overstate the wall time when judging ran beside generation."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codetrial.errors import StoreError
from codetrial.store import RunStore, find_runs
from codetrial.sweep.folder import STATE


@dataclass(frozen=True)
class Rate:
    seconds: float
    chains: int
    runs: int

    @property
    def per_chain(self) -> float:
        return self.seconds / self.chains


def _cell_wall_s(run_dir: Path) -> float | None:
    """The wall seconds a sweep recorded for this run, when it was a finished cell."""
    try:
        state = json.loads((run_dir.parent.parent / STATE).read_text(encoding="utf-8"))
        return float(state["finished"][run_dir.name]["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def rates(places: Iterable[Path], wanted: set[tuple[str, str]]) -> dict[tuple[str, str], Rate]:
    """(model, suite) -> seconds per chain over the runs found in `places`, for the
    pairs `wanted`; a run that cannot be read is passed over."""
    seconds: dict[tuple[str, str], float] = {}
    chains: dict[tuple[str, str], int] = {}
    runs: dict[tuple[str, str], int] = {}
    for run_dir in find_runs(places):
        with contextlib.suppress(StoreError), RunStore.open(run_dir) as store:
            suite = store.manifest.config.suite
            for model in store.manifest.config.models:
                key = (model, suite)
                attempts = store.attempts(model) if key in wanted else []
                if not attempts:
                    continue
                wall_s = _cell_wall_s(run_dir) if len(store.manifest.config.models) == 1 else None
                spent = sum(a.generation_s + a.execution_s for a in attempts)
                seconds[key] = seconds.get(key, 0.0) + (spent if wall_s is None else wall_s)
                chains[key] = chains.get(key, 0) + len({(a.task_id, a.sample) for a in attempts})
                runs[key] = runs.get(key, 0) + 1
    return {key: Rate(seconds[key], chains[key], runs[key]) for key in chains}
