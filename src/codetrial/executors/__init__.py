"""Executors: where the work of a sweep, or of judging a samples file, is done (see
`codetrial.executors.base`)."""

from codetrial.executors.base import (
    EXECUTORS,
    Cell,
    Cells,
    Runner,
    Sample,
    executor,
)

__all__ = [
    "EXECUTORS",
    "Cell",
    "Cells",
    "Runner",
    "Sample",
    "executor",
]
