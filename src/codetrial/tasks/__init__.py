"""Tasks: what a model is asked to write and the tests that judge it.

Four shapes: a function `Task`, whose tests run on the trusted side against the
sandboxed candidate (trust level "trusted-side"); a `WorkspaceTask`, a folder of files
the model edits, whose tests run in the sandbox beside them ("in-sandbox"); and a
`RepositoryTask`, an issue against a repository at a commit, judged by the
repository's own tests as SWE-bench judges a patch ("in-sandbox"); and a
`QuestionTask`, a question about data files answered by programs the model writes,
whose answer is checked on the trusted side ("trusted-side").
"""

from codetrial.tasks.loader import (
    AnyTask,
    JudgedTask,
    defaults_for,
    function_tasks,
    gate_for,
    known_suites,
    load_folder,
    load_suite,
    repository_tasks,
    task_digest,
)
from codetrial.tasks.model import Signature, Task, TestFile
from codetrial.tasks.questions import QuestionTask
from codetrial.tasks.repository import RepositoryTask
from codetrial.tasks.workspace import WorkspaceTask

__all__ = [
    "AnyTask", "JudgedTask", "QuestionTask", "RepositoryTask", "Signature", "Task", "TestFile",
    "WorkspaceTask", "defaults_for", "function_tasks", "gate_for", "known_suites", "load_folder",
    "load_suite", "repository_tasks", "task_digest",
]  # fmt: skip
