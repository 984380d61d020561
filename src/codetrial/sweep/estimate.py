"""What a cell will cost, from the runs of the same model on the same suite that
codetrial stored before: their generation and judging seconds per chain (a sample's
first attempt and its repairs), times the chains the cell has still to run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codetrial.errors import StoreError
from codetrial.runs import find_runs
from codetrial.store import RunStore


@dataclass(frozen=True)
class Rate:
    seconds: float
    chains: int
    runs: int

    @property
    def per_chain(self) -> float:
        return self.seconds / self.chains


def rates(places: Iterable[Path], wanted: set[tuple[str, str]]) -> dict[tuple[str, str], Rate]:
    """(model, suite) -> seconds per chain over the runs found in `places`, for the
    pairs `wanted`; a run that cannot be read is passed over."""
    seconds: dict[tuple[str, str], float] = {}
    chains: dict[tuple[str, str], set[tuple[Path, str, int]]] = {}
    for run_dir in find_runs(places):
        with contextlib.suppress(StoreError), contextlib.closing(RunStore.open(run_dir)) as store:
            suite = store.manifest.config.suite
            models = [m for m in store.manifest.config.models if (m, suite) in wanted]
            for attempt in (a for model in models for a in store.attempts(model)):
                key = (attempt.model, suite)
                seconds[key] = seconds.get(key, 0.0) + attempt.generation_s + attempt.execution_s
                chains.setdefault(key, set()).add((run_dir, attempt.task_id, attempt.sample))
    return {
        key: Rate(seconds[key], len(done), len({run_dir for run_dir, _, _ in done}))
        for key, done in chains.items()
    }
