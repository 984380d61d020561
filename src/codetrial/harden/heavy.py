"""A heavy input for a function task: the largest of its generated inputs, scaled up
until the reference spends a measurable time on it.

Scaling makes the input's collections longer: its string and list arguments are
repeated k times, for k = 2, 4, 8, and so on; when it has none, its integer arguments
are multiplied by k instead (an integer beside a list is more often a target or an
index than a size), up to MAX_SCALE; a string or a list grows until the input
written out would pass MAX_CHARS. Everything else stays: tuples (more often a record of fixed shape
than a sequence), floats, booleans, sets and dicts. The ladder stops at the first
scale on which the reference's process spends HEAVY_CPU_S, or at the last one it
handles: a scale on which it raises, returns something that is not plain data, or
passes a limit ends the ladder, and the scale before it is kept. Scaling can break
a task's preconditions (a sorted list repeated is not sorted); the reference's
output is what candidates must agree with on the heavy input, so a candidate is
only timed where it gives the same answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from codetrial.errors import SandboxError
from codetrial.harden.inputs import Args, source_of
from codetrial.tasks import Task
from codetrial.verdict.pool import NO_ANSWER, JudgePool

HEAVY_CPU_S = 0.1  # the reference's CPU seconds aimed at on a heavy input
LADDER_CAP_S = 2.0  # per call while scaling: past this, a scale is too heavy
MAX_SCALE = 2**12  # for integers: a multiplied integer stays short when written out
MAX_CHARS = 1_000_000  # the heavy input written as a literal


def scaled(args: Args, k: int) -> Args:
    """`args` with each string and list repeated `k` times, or, without any, each
    integer multiplied by `k`."""
    grown = (str, list) if _has_sequences(args) else (int,)
    return tuple(value * k if type(value) in grown else value for value in args)


def _has_sequences(args: Args) -> bool:
    return any(type(value) in (str, list) for value in args)


def _grown(base: Args, k: int) -> tuple[Args, str] | None:
    """`base` scaled by `k`, and as a literal, when that changes it and keeps it
    within MAX_CHARS (and `k` within MAX_SCALE, for integers)."""
    if k > MAX_SCALE and not _has_sequences(base):
        return None
    bigger = scaled(base, k)
    text = source_of(bigger)
    return (bigger, text) if bigger != base and len(text) <= MAX_CHARS else None


def heavy_inputs(pool: JudgePool, bases: Sequence[tuple[Task, Args]]) -> dict[str, str]:
    """Task id -> its heavy input as a literal, for each (task, base input) whose
    base grows when scaled and whose reference handles at least the first scale.
    Every task's ladder climbs at once, a step at a time."""
    found: dict[str, str] = {}
    climbing = [(task, base, 2, grown) for task, base in bases if (grown := _grown(base, 2))]
    while climbing:
        steps = [
            (
                task,
                base,
                k,
                grown,
                pool.submit_call(task.reference or "", task, list(grown[0]), LADDER_CAP_S),
            )
            for task, base, k, grown in climbing
        ]
        climbing = []
        for task, base, k, (_, text), step in steps:
            try:
                output, ended = step.result()
            except SandboxError:
                continue  # the ladder stops where the sandbox failed it
            if ended is None or output.startswith(NO_ANSWER):
                continue
            found[task.id] = text
            higher = _grown(base, 2 * k) if ended.cpu_s < HEAVY_CPU_S else None
            if higher is not None:
                climbing.append((task, base, 2 * k, higher))
    return found
