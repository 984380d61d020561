"""The code interpreter on trial: questions about data files, answered by programs the
model writes and the sandbox runs (see `codetrial.interpret.questions`)."""

from codetrial.interpret.loop import MODES
from codetrial.interpret.questions import (
    ReferenceCheck,
    check_references,
    question_sandbox,
    run_questions,
)

__all__ = [
    "MODES",
    "ReferenceCheck",
    "check_references",
    "question_sandbox",
    "run_questions",
]
