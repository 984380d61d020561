"""A heavy input for a function task: the largest of its generated inputs, scaled up
until the reference spends a measurable time on it.

Scaling makes the input's collections longer: its string and list arguments are
repeated k times, for k = 2, 4, 8, and so on; when it has none, its integer arguments
are multiplied by k instead (an integer beside a list is more often a target or an
index than a size). Everything else stays: tuples (more often a record of fixed shape
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
MAX_SCALE = 2**12
MAX_CHARS = 1_000_000  # the heavy input written as a literal


def scaled(args: Args, k: int) -> Args:
    """`args` with each string and list repeated `k` times, or, without any, each
    integer multiplied by `k`."""
    grown = (str, list) if any(type(v) in (str, list) for v in args) else (int,)
    return tuple(value * k if type(value) in grown else value for value in args)


def _grows(base: Args, k: int) -> bool:
    """Whether scaling `base` by `k` changes it and keeps it within MAX_CHARS."""
    bigger = scaled(base, k)
    return bigger != base and len(source_of(bigger)) <= MAX_CHARS


def heavy_inputs(pool: JudgePool, bases: Sequence[tuple[Task, Args]]) -> dict[str, Args]:
    """Task id -> its heavy input, for each (task, base input) whose base grows when
    scaled and whose reference handles at least the first scale. Every task's
    ladder climbs at once, a step at a time."""
    found: dict[str, Args] = {}
    climbing = [(task, base, 2) for task, base in bases if _grows(base, 2)]
    while climbing:
        steps = [
            (task, base, k,
             pool.submit_call(task.reference or "", task, list(scaled(base, k)), LADDER_CAP_S))
            for task, base, k in climbing
        ]  # fmt: skip
        climbing = []
        for task, base, k, step in steps:
            try:
                output, ended = step.result()
            except SandboxError:
                continue  # the ladder stops where the sandbox failed it
            if ended is None or output.startswith(NO_ANSWER):
                continue
            found[task.id] = scaled(base, k)
            if ended.cpu_s < HEAVY_CPU_S and 2 * k <= MAX_SCALE and _grows(base, 2 * k):
                climbing.append((task, base, 2 * k))
    return found
