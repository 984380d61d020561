"""Efficiency against the reference: each passing candidate's CPU time and peak
memory beside its task's reference, on the task's tests and on its heavy input.

Measured after judging, in the run's sandboxes, for function tasks with a
reference, so that candidates and reference are measured alike and after any
generation is over (a verdict's own usage, stored with every attempt, may have been
taken while the model was generating). The figures come from the kernel's
accounting of the sandboxed process, read by the fork server, which the candidate
cannot reach: CPU seconds (user and system, its threads included; the seccomp
filter keeps it from starting processes of its own) and peak resident memory.

On the tests, every distinct passing program is judged once more and the
reference, the yardstick, REPEATS times (its medians kept). A test run's process
also loads the program and decodes the inputs, the same for both, which pulls the
ratios of light test runs towards 1.

The heavy input (see heavy.py) is where the ratios mean most. There every program
runs REPEATS times and the least is kept: noise on a shared machine only ever adds
time, and decoding a large input varies by tens of percent. A process that loads a
function doing nothing and decodes the same input gives the baseline, taken off
both, so the CPU ratio is of the work itself; the reference's work must be at least
MIN_WORK_S, or the ratio would be the noise's (and a candidate's own imports count
as its work). A candidate is timed only when its answer is the reference's, and run
again only then; it is stopped at its cap (CAP_RATIO times the reference's work, at
least MIN_CAP_S, at most the run's CPU limit, which can make it less than CAP_RATIO
times), and its ratio is then at least the cap's. A candidate more than SLOW_RATIO
times the reference's CPU time on the tests or on the heavy input, or stopped at its
cap there, is flagged slow.

EvalPerf's idea is the anchor: efficiency is scored on correct code only, on an
input that exercises performance. Where this differs: EvalPerf counts CPU
instructions with hardware counters and scores a candidate by the share of graded
reference solutions it matches or beats; codetrial reads the process's CPU time and
peak memory (no counters needed, and memory is covered), repeats to tame the noise
of time, and reports a plain ratio to the task's one reference.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from codetrial.errors import SandboxError
from codetrial.gate import get_profile
from codetrial.harden.compare import same
from codetrial.literals import NOT_LITERAL
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.report import EFFICIENCY
from codetrial.sandbox import ChildExit, codec
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic
from codetrial.syntax import literal
from codetrial.tasks import Task
from codetrial.verdict.pool import NO_ANSWER, JudgePool

REPEATS = 3  # runs of the reference on the tests, and of every program on a heavy input
SLOW_RATIO = 10.0
CAP_RATIO = 20.0
MIN_CAP_S = 1.0
MIN_WORK_S = 0.01  # a reference's work on a heavy input below this is too light to time
Calls = list[Future[tuple[str, ChildExit | None]]]


@dataclass(frozen=True)
class Measure:
    """One program's figures (see `_tests` and `_heavy` for how several runs make
    them); `output` is its answer on a heavy input (as `submit_outputs` writes it),
    `over` that it ran past its cap there."""

    cpu_s: float
    peak_kb: int
    output: str = ""
    over: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"cpu_s": round(self.cpu_s, 6), "peak_kb": self.peak_kb}


@dataclass(frozen=True)
class HeavyReference:
    """A task's heavy input (`args`) as the reference handles it: the process that
    does nothing but load and decode (`base`), the reference's, its answer decoded,
    and the cap for candidates."""

    args: list[Any]
    base: Measure
    reference: Measure
    answer: Any
    cap_s: float

    @property
    def work_s(self) -> float:
        return self.reference.cpu_s - self.base.cpu_s

    def agrees(self, output: str) -> bool:
        """Whether a candidate's output (as `submit_outputs` writes it) is the
        reference's answer."""
        return not output.startswith(NO_ANSWER) and same(
            codec.decode(json.loads(output)), self.answer
        )


def _results(futures: Sequence[Future[Any]]) -> list[Any] | None:
    """The futures' results, or None when the sandbox failed one (not the
    program's doing: it is left unmeasured)."""
    try:
        return [f.result() for f in futures]
    except SandboxError:
        return None


def _tests(futures: list[Future[Verdict]]) -> Measure | str:
    """The (median) test run, or why there is none: each run must pass again."""
    verdicts = _results(futures)
    if verdicts is None:
        return "the sandbox failed"
    if any(v.outcome is not Outcome.PASSED for v in verdicts):
        return "did not pass again on every run"
    if any(v.usage is None for v in verdicts):
        return "a run's usage was not reported"
    return Measure(
        statistics.median(v.usage.cpu_s for v in verdicts),
        int(statistics.median(v.usage.peak_kb for v in verdicts)),
    )


def _heavy(futures: Calls, cap_s: float) -> Measure | str:
    """The least of the heavy calls (a machine's noise only ever adds time) when
    every call gave the same answer (a raised exception is an answer too), `over`
    at the cap when the first ran past it (a later one that does is noise, left
    out); otherwise why there is none."""
    calls = _results(futures)
    if calls is None:
        return "the sandbox failed"
    if calls[0][0] == "timeout":
        return Measure(cap_s, calls[0][1].peak_kb if calls[0][1] else 0, "timeout", True)
    calls = [call for call in calls if call[0] != "timeout"]
    outputs = [output for output, _ in calls]
    ends = [ended for _, ended in calls]
    if any(o in ("stopped", "raised MemoryError") for o in outputs) or None in ends:
        return "stopped by a limit or a fault"
    if len(set(outputs)) > 1:
        return "its answers differ from one run to the next"
    measured = [e for e in ends if e is not None]
    return Measure(min(e.cpu_s for e in measured), min(e.peak_kb for e in measured), outputs[0])


def _ratio(mine: float, theirs: float) -> float | None:
    return round(max(0.0, mine) / theirs, 3) if theirs > 0 else None


def _heavy_args(task: Task) -> list[Any] | str:
    """The task's heavy input as arguments, or why it is not a tuple of them."""
    try:
        args = literal(task.heavy_input)
    except NOT_LITERAL as exc:
        return f"heavy_input is not a Python literal ({type(exc).__name__})"
    if not isinstance(args, tuple) or len(args) != task.signature.n_params:
        return f"heavy_input is not a tuple of the {task.signature.n_params} arguments"
    return list(args)


def _calls(
    pool: JudgePool, task: Task, args: list[Any], code: str, cap_s: float, times: int = REPEATS
) -> Calls:
    return [pool.submit_call(code, task, args, cap_s) for _ in range(times)]


def _nothing(task: Task) -> str:
    """A function of the task's name that does nothing: loading and decoding alone."""
    return f"def {task.entry_point}(*args, **kwargs):\n    return None\n"


def _usable(
    args: list[Any], base: Measure | str, reference: Measure | str, limit: float
) -> HeavyReference | str:
    """The task's heavy input as measured on the reference, or why it cannot be used."""
    if isinstance(base, str) or base.over:
        return "the baseline process did not finish within the limits"
    if isinstance(reference, str) or reference.over or reference.output.startswith(NO_ANSWER):
        return "the reference did not give one answer within the limits"
    work = reference.cpu_s - base.cpu_s
    if work < MIN_WORK_S:
        return f"the reference's work on it is under {MIN_WORK_S * 1000:g} ms"
    answer = codec.decode(json.loads(reference.output))
    cap = min(limit, max(MIN_CAP_S, CAP_RATIO * work))
    return HeavyReference(args, base, reference, answer, cap)


def _heavy_references(pool: JudgePool, tasks: Sequence[Task]) -> dict[str, HeavyReference | str]:
    """Each task's heavy input measured on the reference, or why it cannot be used
    (every call is submitted before any is awaited)."""
    limit = float(pool.limits.cpu_s)
    found: dict[str, HeavyReference | str] = {}
    runs = {}
    for task in tasks:
        args = _heavy_args(task)
        if isinstance(args, str):
            found[task.id] = args
            continue
        base = _calls(pool, task, args, _nothing(task), limit)
        runs[task.id] = (args, base, _calls(pool, task, args, task.reference or "", limit))
    for tid, (args, base, reference) in runs.items():
        found[tid] = _usable(args, _heavy(base, limit), _heavy(reference, limit), limit)
    return found


def _candidate_calls(
    pool: JudgePool,
    tasks: dict[str, Task],
    programs: set[tuple[str, str]],
    heavy: dict[str, HeavyReference | str],
) -> dict[tuple[str, str], Calls]:
    """Each program's heavy calls: one first, and the other repeats only for those
    whose first gave the reference's answer within the cap (a slow or wrong
    candidate costs one call, not three)."""
    usable = {tid: found for tid, found in heavy.items() if isinstance(found, HeavyReference)}

    def calls(tid: str, code: str, times: int) -> Calls:
        return _calls(pool, tasks[tid], usable[tid].args, code, usable[tid].cap_s, times)

    first = {(tid, code): calls(tid, code, 1) for tid, code in programs if tid in usable}
    more = {}
    for key, done in first.items():
        ended = _results(done)
        if ended is not None and usable[key[0]].agrees(ended[0][0]):
            more[key] = calls(*key, REPEATS - 1)
    return {key: done + more.get(key, []) for key, done in first.items()}


def measure(store: RunStore, tasks: Sequence[Task], pool: JudgePool) -> None:
    """Write the run's efficiency.json: its passing candidates of function `tasks` with
    a reference, measured against that reference."""
    with_reference = {t.id: t for t in tasks if t.reference}
    passing = [
        a
        for r in store.task_results()
        for a in r.attempts
        if a.passed and a.code is not None and a.task_id in with_reference
    ]
    profile = get_profile("off")
    candidates = {(a.task_id, a.code or "") for a in passing}
    measured = sorted({tid for tid, _ in candidates})
    references = {(tid, with_reference[tid].reference or "") for tid in measured}
    tests = {
        (tid, code): [
            pool.submit_fresh(Candidate(code, code), with_reference[tid], profile)
            for _ in range(REPEATS if (tid, code) in references else 1)
        ]
        for tid, code in candidates | references
    }
    heavy = _heavy_references(
        pool, [with_reference[t] for t in measured if with_reference[t].heavy_input]
    )
    heavy_calls = _candidate_calls(pool, with_reference, candidates, heavy)
    yardsticks = {tid: _tests(tests[tid, with_reference[tid].reference or ""]) for tid in measured}
    programs = {}
    for tid, code in candidates:
        found = heavy.get(tid)
        on_heavy = None
        if isinstance(found, HeavyReference):
            on_heavy = _heavy_row(_heavy(heavy_calls[tid, code], found.cap_s), found)
        programs[tid, code] = _program_row(_tests(tests[tid, code]), yardsticks[tid], on_heavy)
    document = {
        "repeats": REPEATS,
        "slow_ratio": SLOW_RATIO,
        "cap_ratio": CAP_RATIO,
        "min_cap_s": MIN_CAP_S,
        "min_work_s": MIN_WORK_S,
        "references": [
            _reference_row(with_reference[tid], yardsticks[tid], heavy.get(tid)) for tid in measured
        ],
        "candidates": [
            {
                "model": a.model,
                "task_id": a.task_id,
                "sample": a.sample,
                "attempt": a.attempt,
                **programs[a.task_id, a.code or ""],
            }
            for a in passing
        ],
    }
    write_atomic(store.run_dir / EFFICIENCY, json.dumps(document, indent=2))


def _reference_row(
    task: Task, measured: Measure | str, heavy: HeavyReference | str | None
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "task_id": task.id,
        "tests": measured.as_dict() if isinstance(measured, Measure) else {"unmeasured": measured},
        "heavy": None,
    }
    if isinstance(heavy, HeavyReference):
        row["heavy"] = {
            "chars": len(task.heavy_input),
            **heavy.reference.as_dict(),
            "base_cpu_s": round(heavy.base.cpu_s, 6),
        }
    elif heavy is not None:
        row["heavy"] = {"chars": len(task.heavy_input), "unusable": heavy}
    return row


def _program_row(
    mine: Measure | str, theirs: Measure | str, on_heavy: dict[str, Any] | None
) -> dict[str, Any]:
    """A candidate program against the reference: on the tests, on the heavy input
    (`on_heavy`, when the task has a usable one), and slow when over SLOW_RATIO on
    either or stopped at its cap on the heavy input."""
    unmeasured: dict[str, Any] = {"cpu_ratio": None, "peak_ratio": None}
    tests: dict[str, Any]
    if isinstance(mine, str):
        tests = {**unmeasured, "unmeasured": mine}
    elif isinstance(theirs, str):
        tests = {**unmeasured, "unmeasured": f"the reference's test run: {theirs}"}
    else:
        tests = {
            **mine.as_dict(),
            "cpu_ratio": _ratio(mine.cpu_s, theirs.cpu_s),
            "peak_ratio": _ratio(mine.peak_kb, theirs.peak_kb),
        }
    ratios = [part["cpu_ratio"] for part in (tests, on_heavy) if part]
    over = bool(on_heavy and on_heavy["over_cap"])
    slow = over or any(r is not None and r > SLOW_RATIO for r in ratios)
    return {"tests": tests, "heavy": on_heavy, "slow": slow}


def _heavy_row(calls: Measure | str, heavy: HeavyReference) -> dict[str, Any]:
    """A candidate on the heavy input: timed when it agrees with the reference (or
    ran past its cap), else whether it agrees or why it was not measured."""
    row: dict[str, Any] = {"agrees": None, "over_cap": False, "cpu_ratio": None, "peak_ratio": None}
    if isinstance(calls, str):
        return {**row, "unmeasured": calls}
    row["over_cap"] = calls.over
    if not calls.over:
        row["agrees"] = heavy.agrees(calls.output)
        if not row["agrees"]:
            return row
    if calls.over:  # the cap is on the call's own work (decoding comes before it)
        return {
            **row,
            "cpu_s": None,
            "peak_kb": calls.peak_kb,
            "cpu_ratio": _ratio(calls.cpu_s, heavy.work_s),
            "peak_ratio": None,
        }
    return {
        **row,
        **calls.as_dict(),
        "cpu_ratio": _ratio(calls.cpu_s - heavy.base.cpu_s, heavy.work_s),
        "peak_ratio": _ratio(calls.peak_kb, heavy.reference.peak_kb),
    }
