"""Efficiency against the reference: each passing candidate's CPU time and peak
memory beside its task's reference, on the task's tests and on its heavy input.

Measured after judging, in the run's sandboxes: every distinct passing program and
the reference are run anew REPEATS times each and the medians kept, so that both
are measured alike and at the same time (a verdict's own usage, stored with every
attempt, was taken while the model may have been generating). The figures come from
the kernel's accounting of the sandboxed process, which the candidate cannot touch:
CPU seconds (user and system) and peak resident memory. A test run's process also
loads the program and decodes its inputs, the same for both, which pulls the ratios
of light test runs towards 1. The heavy input (see heavy.py) is where the ratios mean
most: there, the CPU time of a process that only loads a function doing nothing and
decodes the input is taken off both, so the ratio is of the work itself; a candidate
is timed only when its output agrees with the reference's, and is stopped at
CAP_RATIO times the reference's work (and counts as at least that). A candidate more
than SLOW_RATIO times the reference's CPU time on either is flagged.

EvalPerf's idea is the anchor: efficiency is scored on correct code only, on an
input that exercises performance. Where this differs: EvalPerf counts CPU
instructions with hardware counters and scores a candidate by the share of graded
reference solutions it matches or beats; codetrial reads the process's CPU time and
peak memory (no counters needed, and memory is covered), repeats to tame the noise
of time, and reports a plain ratio to the task's one reference.
"""

from __future__ import annotations

import ast
import json
import statistics
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from codetrial.gate import get_profile
from codetrial.harden.compare import same
from codetrial.records import AttemptRecord, Candidate, Outcome, Usage, Verdict
from codetrial.report import EFFICIENCY
from codetrial.sandbox import ChildExit, codec
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic
from codetrial.tasks import AnyTask, Task
from codetrial.verdict.pool import JudgePool

REPEATS = 3
SLOW_RATIO = 10.0
CAP_RATIO = 20.0
MIN_CAP_S = 1.0
MIN_WORK_S = 0.002  # a reference's work below this on a heavy input is too light to time
_FAILED = ("raised", "returned", "timeout", "stopped")
Calls = list[Future[tuple[str, ChildExit | None]]]


@dataclass(frozen=True)
class Measure:
    """Medians over the repeats; `output` is a heavy call's (as `submit_outputs`
    writes it), `over` that the call ran past its cap."""

    cpu_s: float
    peak_kb: int
    output: str = ""
    over: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"cpu_s": round(self.cpu_s, 6), "peak_kb": self.peak_kb}


@dataclass(frozen=True)
class HeavyReference:
    """A task's heavy input (`args`) as the reference handles it: the process that
    does nothing but load and decode (`base`), the reference's, and the cap for
    candidates."""

    args: list[Any]
    base: Measure
    reference: Measure
    cap_s: float

    @property
    def work_s(self) -> float:
        return self.reference.cpu_s - self.base.cpu_s


def _median(usages: Sequence[Usage | ChildExit | None]) -> Measure | None:
    measured = [u for u in usages if u is not None]
    if not measured:
        return None
    return Measure(
        statistics.median(u.cpu_s for u in measured),
        int(statistics.median(u.peak_kb for u in measured)),
    )


def _tests(futures: list[Future[Verdict]]) -> Measure | None:
    return _median([f.result().usage for f in futures if f.result().outcome is Outcome.PASSED])


def _heavy(futures: Calls, cap_s: float) -> Measure | None:
    """The calls' median when they all gave the same output; a first call past its
    cap makes the measure `over`, at the cap; None when they failed or disagree."""
    calls = [f.result() for f in futures]
    first = calls[0][0]
    if first.startswith(("timeout", "stopped")):
        return Measure(cap_s, max((e.peak_kb for _, e in calls if e), default=0), first, True)
    if first.startswith(_FAILED) or any(output != first for output, _ in calls):
        return None
    median = _median([ended for _, ended in calls])
    return Measure(median.cpu_s, median.peak_kb, first) if median else None


def _agrees(output: str, reference: str) -> bool:
    if output.startswith(_FAILED):
        return False
    return same(codec.decode(json.loads(output)), codec.decode(json.loads(reference)))


def _ratio(mine: float, theirs: float) -> float | None:
    return round(mine / theirs, 3) if theirs > 0 else None


def _heavy_args(task: Task) -> tuple[list[Any] | None, str]:
    """The task's heavy input as arguments, or why it is not a tuple of them."""
    try:
        args = ast.literal_eval(task.heavy_input)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        return None, f"heavy_input is not a Python literal ({type(exc).__name__})"
    if not isinstance(args, tuple) or len(args) != task.signature.n_params:
        return None, f"heavy_input is not a tuple of the {task.signature.n_params} arguments"
    return list(args), ""


def _calls(
    pool: JudgePool, task: Task, args: list[Any], code: str, cap_s: float, times: int = REPEATS
) -> Calls:
    return [pool.submit_call(code, task, args, cap_s) for _ in range(times)]


def _candidate_calls(
    pool: JudgePool, tasks: dict[str, Task], programs: set[tuple[str, str]],
    heavy: dict[str, tuple[HeavyReference | None, str]],
) -> dict[tuple[str, str], Calls]:  # fmt: skip
    """Each program's heavy calls: one first, and the other repeats only for those
    that did not run past their cap on it (a slow candidate costs one cap, not three)."""
    usable = {tid: found for tid, (found, _) in heavy.items() if found is not None}

    def calls(tid: str, code: str, times: int) -> Calls:
        return _calls(pool, tasks[tid], usable[tid].args, code, usable[tid].cap_s, times)

    first = {(tid, code): calls(tid, code, 1) for tid, code in programs if tid in usable}
    return {
        key: done if done[0].result()[0].startswith(("timeout", "stopped"))
        else done + calls(*key, REPEATS - 1)
        for key, done in first.items()
    }  # fmt: skip


def _nothing(task: Task) -> str:
    """A function of the task's name that does nothing: loading and decoding alone."""
    return f"def {task.entry_point}(*args, **kwargs):\n    return None\n"


def _usable(
    args: list[Any], base: Measure | None, reference: Measure | None, limit: float
) -> tuple[HeavyReference | None, str]:
    """The task's heavy input as measured on the reference, or why it cannot be used."""
    if base is None or reference is None or reference.over:
        return None, "the reference did not give one answer within the limits"
    if reference.cpu_s - base.cpu_s < MIN_WORK_S:
        return None, f"the reference's work on it is under {MIN_WORK_S * 1000:g} ms"
    cap = min(limit, max(MIN_CAP_S, base.cpu_s + CAP_RATIO * (reference.cpu_s - base.cpu_s)))
    return HeavyReference(args, base, reference, cap), ""


def _heavy_references(
    pool: JudgePool, tasks: Sequence[Task]
) -> dict[str, tuple[HeavyReference | None, str]]:
    """Each task's heavy input measured on the reference, or why it cannot be used
    (every call is submitted before any is awaited)."""
    limit = float(pool.limits.cpu_s)
    found: dict[str, tuple[HeavyReference | None, str]] = {}
    runs = {}
    for task in tasks:
        args, why = _heavy_args(task)
        if args is None:
            found[task.id] = (None, why)
            continue
        base = _calls(pool, task, args, _nothing(task), limit)
        runs[task.id] = (args, base, _calls(pool, task, args, task.reference or "", limit))
    for tid, (args, base, reference) in runs.items():
        found[tid] = _usable(args, _heavy(base, limit), _heavy(reference, limit), limit)
    return found


def measure(store: RunStore, tasks: Sequence[AnyTask], pool: JudgePool) -> None:
    """Write the run's efficiency.json: its passing candidates of function tasks with
    a reference, measured against that reference."""
    with_reference = {t.id: t for t in tasks if isinstance(t, Task) and t.reference}
    passing = [
        a for r in store.task_results() for a in (r.first, *r.repairs)
        if a.passed and a.code is not None and a.task_id in with_reference
    ]  # fmt: skip
    profile = get_profile("off")
    programs = {(a.task_id, a.code or "") for a in passing}
    programs |= {(tid, with_reference[tid].reference or "") for tid, _ in programs}
    tests = {
        (tid, code): [pool.submit_fresh(Candidate(code, code), with_reference[tid], profile)
                      for _ in range(REPEATS)]
        for tid, code in programs
    }  # fmt: skip
    measured = sorted({tid for tid, _ in programs})
    heavy = _heavy_references(
        pool, [t for tid in measured if (t := with_reference[tid]).heavy_input]
    )
    heavy_calls = _candidate_calls(pool, with_reference, programs, heavy)
    references = []
    for tid in measured:
        task = with_reference[tid]
        ref = _tests(tests[tid, task.reference or ""])
        row: dict[str, Any] = {
            "task_id": tid,
            "tests": ref.as_dict() if ref else None,
            "heavy": None,
        }
        if tid in heavy:
            found, why = heavy[tid]
            row["heavy"] = {"chars": len(task.heavy_input), **(
                {**found.reference.as_dict(), "base_cpu_s": round(found.base.cpu_s, 6)}
                if found else {"unusable": why}
            )}  # fmt: skip
        references.append(row)
    candidates = [
        _candidate(a, with_reference[a.task_id], tests, heavy_calls, heavy.get(a.task_id))
        for a in passing
    ]
    document = {
        "repeats": REPEATS, "slow_ratio": SLOW_RATIO, "cap_ratio": CAP_RATIO,
        "references": references, "candidates": candidates,
    }  # fmt: skip
    write_atomic(store.run_dir / EFFICIENCY, json.dumps(document, indent=2))


def _candidate(
    attempt: AttemptRecord,
    task: Task,
    tests: dict[tuple[str, str], list[Future[Verdict]]],
    heavy_calls: dict[tuple[str, str], Calls],
    heavy: tuple[HeavyReference | None, str] | None,
) -> dict[str, Any]:
    code, reference = attempt.code or "", task.reference or ""
    row: dict[str, Any] = {
        "model": attempt.model, "task_id": task.id, "sample": attempt.sample,
        "attempt": attempt.attempt, "tests": None, "heavy": None,
    }  # fmt: skip
    mine, theirs = _tests(tests[task.id, code]), _tests(tests[task.id, reference])
    if mine and theirs:
        row["tests"] = {
            **mine.as_dict(), "cpu_ratio": _ratio(mine.cpu_s, theirs.cpu_s),
            "peak_ratio": _ratio(mine.peak_kb, theirs.peak_kb),
        }  # fmt: skip
    found = heavy[0] if heavy else None
    if found is not None:
        calls = _heavy(heavy_calls[task.id, code], found.cap_s)
        over = calls is not None and calls.over
        agrees = (
            None if over else calls is not None and _agrees(calls.output, found.reference.output)
        )
        row["heavy"] = {"agrees": agrees, "over_cap": over, "cpu_ratio": None, "peak_ratio": None}
        if calls is not None and (over or agrees):
            row["heavy"].update(
                calls.as_dict(),
                cpu_ratio=_ratio(calls.cpu_s - found.base.cpu_s, found.work_s),
                peak_ratio=_ratio(calls.peak_kb, found.reference.peak_kb),
            )
    ratios = [part["cpu_ratio"] for part in (row["tests"], row["heavy"]) if part]
    row["slow"] = any(r is not None and r > SLOW_RATIO for r in ratios)
    return row
