"""The bounded repair loop's decision: whether a try is followed by another.

A repair sees feedback from the visible tests (or the gate, or the parser) only; what
it is asked is its task's kind's (see `codetrial.kinds`). Hidden tests never reach a
model: a candidate that passes the visible tests and fails hidden ones gives the
model nothing it may see, so it is not repaired.
"""

from __future__ import annotations

from codetrial.records import AttemptRecord, Outcome


def needs_repair(previous: AttemptRecord, attempts_allowed: int) -> bool:
    return (
        previous.outcome not in (Outcome.PASSED, Outcome.INFRA_ERROR)
        and previous.feedback is not None
        and previous.attempt < attempts_allowed
    )
