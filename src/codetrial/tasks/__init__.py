"""Tasks: what a model is asked to write and the tests that judge it.

Two shapes: a function `Task`, whose tests run on the trusted side against the
sandboxed candidate (trust level "trusted-side"), and a `WorkspaceTask`, a folder of
files the model edits, whose tests run in the sandbox beside them ("in-sandbox").
"""

from codetrial.tasks.loader import (
    AnyTask,
    defaults_for,
    function_tasks,
    gate_for,
    known_suites,
    load_folder,
    load_suite,
)
from codetrial.tasks.model import Signature, Task, TestFile
from codetrial.tasks.workspace import WorkspaceTask

__all__ = [
    "AnyTask", "Signature", "Task", "TestFile", "WorkspaceTask", "defaults_for",
    "function_tasks", "gate_for", "known_suites", "load_folder", "load_suite",
]  # fmt: skip
