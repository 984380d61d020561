"""Tasks: what a model is asked to write and the tests that judge it.

Six kinds, each a class here and a `Kind` in `codetrial.kinds` that owns how it is
asked and judged: a function `Task`, whose tests run on the trusted side against the
sandboxed candidate (trust level "trusted-side"); a `WorkspaceTask`, a folder of files
the model edits, whose tests run in a sandbox of their own and reach its objects
through requests ("trusted-side"; "in-sandbox" when they read their callers' frames); a
`RepositoryTask`, an issue against a repository at a commit, judged by the
repository's own tests as SWE-bench judges a patch ("in-sandbox"); a
`QuestionTask`, a question about data files answered by programs the model writes,
whose answer is checked on the trusted side ("trusted-side"); and a `ProgramTask`, a
contest problem whose candidate program reads each case's input and whose output is
compared on the trusted side ("trusted-side"); and a `PredictionTask`, one input whose
output the model states, compared on the trusted side with what a trusted program
printed on it in the sandbox ("trusted-side").
"""

from codetrial.tasks.loader import AnyTask, known_suites, load_folder, load_suite
from codetrial.tasks.model import Signature, Task, TestFile
from codetrial.tasks.prediction import PredictionTask
from codetrial.tasks.programs import Case, ProgramTask
from codetrial.tasks.questions import QuestionTask
from codetrial.tasks.repository import RepositoryTask
from codetrial.tasks.workspace import WorkspaceTask

__all__ = [
    "AnyTask",
    "Case",
    "PredictionTask",
    "ProgramTask",
    "QuestionTask",
    "RepositoryTask",
    "Signature",
    "Task",
    "TestFile",
    "WorkspaceTask",
    "known_suites",
    "load_folder",
    "load_suite",
]
