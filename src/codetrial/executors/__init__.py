"""Executors: where the work of a sweep, or of judging a samples file, is done (see
`codetrial.executors.base`)."""

from codetrial.executors.base import (
    EXECUTORS,
    Cell,
    Cells,
    Sample,
    executor,
)

EXECUTORS.declare("local", "codetrial.executors.local")
EXECUTORS.declare("ray", "codetrial.executors.cluster")

__all__ = [
    "EXECUTORS",
    "Cell",
    "Cells",
    "Sample",
    "executor",
]
