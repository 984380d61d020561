"""Verdicts, decided on the trusted side from how the sandbox stopped a candidate and
from per-test results (see `codetrial.verdict.decide`)."""

from codetrial.verdict.decide import (
    FEEDBACK_CHARS,
    STOP_OUTCOMES,
    classify,
    judge,
)
from codetrial.verdict.harness import HARNESSES

HARNESSES.declare("pytest", "codetrial.verdict.pytest_harness")

__all__ = [
    "FEEDBACK_CHARS",
    "STOP_OUTCOMES",
    "classify",
    "judge",
]
