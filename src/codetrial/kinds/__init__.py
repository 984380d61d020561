"""The kinds of task, each in a module of its own that owns what is particular to it
(see `codetrial.kinds.base`)."""

from codetrial.kinds.base import (
    KINDS,
    Asked,
    Kind,
    KindedTask,
    Suite,
    kind_of,
    load_suite,
    released_within,
    stored_tasks,
)

KINDS.declare("function", "codetrial.kinds.function")
KINDS.declare("workspace", "codetrial.kinds.workspace")
KINDS.declare("repository", "codetrial.kinds.repository")
KINDS.declare("question", "codetrial.kinds.question")
KINDS.declare("program", "codetrial.kinds.program")
KINDS.declare("prediction", "codetrial.kinds.prediction")

__all__ = [
    "KINDS",
    "Asked",
    "Kind",
    "KindedTask",
    "Suite",
    "kind_of",
    "load_suite",
    "released_within",
    "stored_tasks",
]
