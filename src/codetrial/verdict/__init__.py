"""Verdicts, decided on the trusted side from how the sandbox stopped a candidate and
from per-test results (see `codetrial.verdict.decide`)."""

from codetrial.verdict.decide import (
    FEEDBACK_CHARS,
    STOP_OUTCOMES,
    classify,
    judge,
    usage_of,
)

__all__ = [
    "FEEDBACK_CHARS",
    "STOP_OUTCOMES",
    "classify",
    "judge",
    "usage_of",
]
