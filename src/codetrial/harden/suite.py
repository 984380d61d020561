"""A hardened copy of a suite: each function task keeps its tests and gains hidden
tests on generated inputs, whose expected outputs come from the task's reference run
in the sandbox.

An input is dropped when the reference raises on it, runs past the limits, returns
something that is not plain data, or returns a different value when run again
(nondeterministic); and when it or its output cannot be written as a Python literal.
Outputs are compared as EvalPlus compares them: exactly, except that a float matches
a float within a relative tolerance of 1e-6 (or an absolute one of 1e-9 near zero).
Folder suites become a folder `<name>-hard` of task folders, each with a
`hidden/test_generated.py`; benchmark suites (HumanEval's `check` harness) become
`<name>-hard.jsonl` in EvalPlus's format, whose `check` runs the original one and
then the generated cases. The original suite is never changed.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codetrial.config import Limits
from codetrial.harden.inputs import Args, mutation_inputs, property_inputs, seed_inputs
from codetrial.sandbox import codec
from codetrial.store.artifacts import write_atomic
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool

HARDEN_CPU_S = 0.25  # per call of the reference: inputs heavier than this are dropped
_COMPARE = '''
import math


def _same(got, want):
    """Exact, except floats: within a relative 1e-6 or an absolute 1e-9."""
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(want, (list, tuple)):
        return (type(got) is type(want) and len(got) == len(want)
                and all(_same(g, w) for g, w in zip(got, want)))
    if isinstance(want, dict):
        return (isinstance(got, dict) and got.keys() == want.keys()
                and all(_same(got[k], want[k]) for k in want))
    return got == want


def _case(function, name, args, want):
    """One generated case; a failure names the input, what came back and what was due."""
    try:
        got = function(*args)
    except Exception as exc:
        raise AssertionError(f"{name}{args!r} raised {type(exc).__name__}: {exc}") from None
    assert _same(got, want), f"{name}{args!r} returned {got!r}, expected {want!r}"
'''


@dataclass(frozen=True)
class Hardened:
    """One task's generated cases, and how many inputs each filter dropped."""

    task: Task
    seeds: int
    generated: int
    cases: list[tuple[Args, Any]]
    dropped: dict[str, int] = field(default_factory=dict)


def _literal(value: Any) -> bool:
    try:
        return bool(ast.literal_eval(repr(value)) == value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _kept(outputs: str, again: str) -> str:
    """Why a reference output is no expected value ("" when it is one)."""
    for reason in ("raised", "timeout", "stopped", "returned"):
        if outputs.startswith(reason):
            return {"returned": "not plain data", "stopped": "timeout"}.get(reason, reason)
    return "" if outputs == again else "nondeterministic"


def harden(
    tasks: Sequence[Task], tests: int = 50, budget: int = 200, seed: int = 0,
    workers: int = 2, timeout: float = 10.0, unsafe_host_exec: bool = False,
) -> list[Hardened]:  # fmt: skip
    """Up to `tests` generated cases per task with a reference, out of `budget`
    generated inputs (half by mutation, half by Hypothesis)."""
    pool = JudgePool(workers, Limits.validated(timeout), unsafe_host_exec)
    try:
        pending = []
        for task in tasks:
            if task.reference is None:
                continue
            seeds = seed_inputs(task)
            made = mutation_inputs(seeds, budget // 2, seed)
            made += property_inputs(task, seeds, budget - budget // 2, seed)
            fresh: list[Args] = []
            for args in made:
                if args not in seeds and args not in fresh:
                    fresh.append(args)
            plain = [list(args) for args in fresh]
            twice = [pool.submit_outputs(task.reference, task, plain, HARDEN_CPU_S)
                     for _ in range(2)]  # fmt: skip
            pending.append((task, len(seeds), len(made), fresh, twice))
        return [
            _filtered(task, seeds, made, fresh, first.result(), second.result(), tests)
            for task, seeds, made, fresh, (first, second) in pending
        ]
    finally:
        pool.close()


def _filtered(
    task: Task, seeds: int, made: int, fresh: list[Args], first: list[str], second: list[str],
    tests: int,
) -> Hardened:  # fmt: skip
    dropped = {"duplicates": made - len(fresh)}
    cases: list[tuple[Args, Any]] = []
    for args, output, again in zip(fresh, first, second, strict=True):
        reason = _kept(output, again)
        expected = None if reason else codec.decode(json.loads(output))
        if not reason and not (_literal(args) and _literal(expected)):
            reason = "not a literal"
        if reason:
            dropped[reason] = dropped.get(reason, 0) + 1
        elif len(cases) < tests:
            cases.append((args, expected))
    return Hardened(task, seeds, made, cases, dropped)


def _cases_source(cases: list[tuple[Args, Any]]) -> str:
    return "[\n" + "".join(f"    ({args!r}, {want!r}),\n" for args, want in cases) + "]"


def generated_test(hardened: Hardened, seed: int) -> str:
    """A pytest file of the generated cases, for a folder task."""
    entry = hardened.task.entry_point
    return (
        f'"""Inputs generated by `codetrial harden` (seed {seed}); each expected value is '
        f'the reference\'s output."""\n\nfrom candidate import {entry}\n{_COMPARE}\n\n'
        f"CASES = {_cases_source(hardened.cases)}\n\n\n"
        f"def test_generated_inputs():\n    for args, want in CASES:\n"
        f"        _case({entry}, {entry!r}, args, want)\n"
    )


def generated_check(hardened: Hardened) -> str:
    """A benchmark task's test code: its own `check`, then the generated cases."""
    original = next(t.source for t in hardened.task.tests)
    return (
        f"{original}\n\n{_COMPARE}\n\n_GENERATED = {_cases_source(hardened.cases)}\n"
        "_original_check = check\n\n\ndef check(candidate):\n    _original_check(candidate)\n"
        "    for args, want in _GENERATED:\n"
        "        _case(candidate, 'candidate', args, want)\n"
    )


def write_suite(hardened: Sequence[Hardened], name: str, out: Path, seed: int) -> Path:
    """The hardened suite, next to nothing of the original: a folder of task folders,
    or an EvalPlus-format JSONL for tasks that use a `check` harness."""
    if all(h.task.harness == "check" for h in hardened):
        path = out / f"{name}-hard.jsonl"
        lines = []
        for h in hardened:
            reference = h.task.reference or ""
            solution = reference.removeprefix(h.task.prompt)
            lines.append(json.dumps({
                "task_id": h.task.id, "prompt": h.task.prompt, "entry_point": h.task.entry_point,
                "canonical_solution": solution, "test": generated_check(h),
            }))  # fmt: skip
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(path, "\n".join(lines) + "\n")
        return path
    root = out / f"{name}-hard"
    for h in hardened:
        folder = root / h.task.id
        (folder / "hidden").mkdir(parents=True, exist_ok=True)
        write_atomic(folder / "spec.md", h.task.spec)
        write_atomic(folder / "reference.py", h.task.reference or "")
        for test in h.task.tests:
            where = folder / ("hidden" if test.visibility.value == "hidden" else "") / test.name
            write_atomic(where, test.source)
        write_atomic(folder / "hidden" / "test_generated.py", generated_test(h, seed))
    return root
