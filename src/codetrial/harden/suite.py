"""A hardened copy of a suite: each function task keeps its tests and gains hidden
tests on generated inputs, whose expected outputs come from the task's reference run
in the sandbox.

An input is dropped when the reference raises on it, runs past the limits, returns
something that is not plain data, or returns a different value when run again
(nondeterministic); and when it or its output cannot be written as a Python literal.
Outputs are compared as EvalPlus compares them (see compare.py).
Folder suites become a folder `<name>-hard` of task folders, each with a
`hidden/test_generated.py`; benchmark suites (the `check` harness: HumanEval, MBPP)
become `<name>-hard.jsonl` in EvalPlus's format, whose tests run the original ones
and then the generated cases. Each task also gets a heavy input (see heavy.py), on
which efficiency is measured. The original suite is never changed.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.extras import require
from codetrial.gate import get_profile
from codetrial.harden.compare import source as comparison
from codetrial.harden.heavy import heavy_inputs
from codetrial.harden.inputs import (
    Args,
    mutation_inputs,
    property_inputs,
    seed_inputs,
    source_of,
)
from codetrial.literals import NOT_LITERAL
from codetrial.records import Candidate, Outcome, Verdict, Visibility
from codetrial.sandbox import SandboxPolicy, codec
from codetrial.store.artifacts import write_atomic
from codetrial.syntax import literal, parse
from codetrial.tasks import Task, TestFile
from codetrial.tasks.benchmarks import defines_check
from codetrial.tasks.model import HEAVY_INPUT
from codetrial.verdict.pool import JudgePool, verdict_of

HARDEN_CPU_S = 0.25  # per call of the reference: inputs heavier than this are dropped


@dataclass(frozen=True)
class Hardened:
    """One task's generated cases, and how many inputs each filter dropped."""

    task: Task
    seeds: int
    generated: int
    cases: list[tuple[Args, Any]]
    dropped: dict[str, int] = field(default_factory=dict)
    heavy: str = ""  # the heavy input, as a Python literal ("" without one)


def _literal(value: Any) -> bool:
    try:
        return bool(literal(source_of(value)) == value)
    except NOT_LITERAL:
        return False


def _expected(output: str, again: str) -> tuple[Any, str]:
    """The reference's output as a value, or why it is none: it raised (or returned
    something that is not plain data), ran past the limits, or came out otherwise
    the second time."""
    if output.startswith(("timeout", "stopped")) or again.startswith(("timeout", "stopped")):
        return None, "timeout"
    if output.startswith(("raised", "returned")):
        return None, "raised"
    value = codec.decode(json.loads(output))
    if again.startswith(("raised", "returned")) or codec.decode(json.loads(again)) != value:
        return None, "nondeterministic"
    return value, ""


def _interleaved(first: list[Args], second: list[Args], seeds: list[Args]) -> list[Args]:
    """Both generators' inputs taken in turn, each once (by its repr, so 1, 1.0 and
    True stay apart), none that the tests already use."""
    seen = {repr(s) for s in seeds}
    fresh = []
    for pair in zip_longest(first, second):
        for args in pair:
            if args is not None and repr(args) not in seen:
                seen.add(repr(args))
                fresh.append(args)
    return fresh


def hardenable(task: Task) -> str:
    """Why a task cannot be hardened ("" when it can): it has no reference."""
    return "" if task.reference is not None else "no reference"


def harden(
    tasks: Sequence[Task],
    *,
    tests: int = 50,
    budget: int = 200,
    seed: int = 0,
    workers: int = 2,
    timeout: float = 10.0,
    unsafe_host_exec: bool = False,
) -> list[Hardened]:
    """Up to `tests` generated cases per task that `hardenable` allows, out of
    `budget` generated inputs (half by mutation, half by Hypothesis, taken in turn).
    A task whose reference does not pass its hardened tests keeps only its own."""
    if budget < 2 or tests < 1:
        raise ConfigError("--budget must be at least 2 and --tests at least 1")
    require("hypothesis", "hypothesis", "harden", "codetrial harden")
    policy = SandboxPolicy(Limits.validated(timeout), unsafe_host_exec)
    with JudgePool(workers, policy) as pool:
        pending = []
        for task in (t for t in tasks if not hardenable(t)):
            seeds = seed_inputs(task)
            mutated = mutation_inputs(seeds, budget // 2, seed)
            drawn = property_inputs(task, seeds, budget - budget // 2, seed)
            fresh = _interleaved(mutated, drawn, seeds)
            plain = [list(args) for args in fresh]
            twice = [
                pool.submit_outputs(task.reference or "", task, plain, HARDEN_CPU_S)
                for _ in range(2)
            ]
            pending.append((task, len(seeds), len(mutated) + len(drawn), fresh, twice))
        found = [
            _filtered(
                task,
                fresh,
                seeds=seeds,
                made=made,
                first=first.result(),
                second=second.result(),
                tests=tests,
            )
            for task, seeds, made, fresh, (first, second) in pending
        ]
        checks = [(h, _reference_check(h, pool, seed)) for h in found]
        verified = [_verified(h, check) for h, check in checks]
        bases = [
            (h.task, max((args for args, _ in h.cases), key=lambda a: len(source_of(a))))
            for h in verified
            if h.cases
        ]
        heavy = heavy_inputs(pool, bases)
        return [
            dataclasses.replace(h, heavy=heavy[h.task.id]) if h.task.id in heavy else h
            for h in verified
        ]


def _filtered(
    task: Task,
    fresh: list[Args],
    *,
    seeds: int,
    made: int,
    first: list[str],
    second: list[str],
    tests: int,
) -> Hardened:
    dropped = {"duplicates": made - len(fresh)}
    cases: list[tuple[Args, Any]] = []
    for args, output, again in zip(fresh, first, second, strict=True):
        expected, reason = _expected(output, again)
        if not reason and not (_literal(args) and _literal(expected)):
            reason = "not a literal"
        if reason:
            dropped[reason] = dropped.get(reason, 0) + 1
        elif len(cases) < tests:
            cases.append((args, expected))
    return Hardened(task, seeds, made, cases, dropped)


def hardened_task(hardened: Hardened, seed: int) -> Task:
    """The task with its generated cases among its hidden tests, and its heavy input."""
    task = hardened.task
    if not hardened.cases:
        return task
    tests: tuple[TestFile, ...]
    if task.harness == "check":
        tests = (TestFile("check.py", generated_check(hardened), Visibility.HIDDEN),)
    else:
        generated = TestFile("test_generated.py", generated_test(hardened, seed), Visibility.HIDDEN)
        tests = (*task.tests, generated)
    return dataclasses.replace(task, tests=tests, heavy_input=hardened.heavy)


def _reference_check(hardened: Hardened, pool: JudgePool, seed: int) -> Future[Verdict] | None:
    """The reference's verdict on its hardened task, to come (None without cases)."""
    if not hardened.cases:
        return None
    reference = hardened.task.reference or ""
    task = hardened_task(hardened, seed)
    return pool.submit(Candidate(reference, reference), task, get_profile("off"))


def _verified(hardened: Hardened, check: Future[Verdict] | None) -> Hardened:
    """`hardened`, or without its cases when the reference fails them (say, an
    output that hangs on the process's hash seed) or runs past the limits on them."""
    if check is None or verdict_of(check).outcome is Outcome.PASSED:
        return hardened
    dropped = {**hardened.dropped, "the reference failed them": len(hardened.cases)}
    return dataclasses.replace(hardened, cases=[], dropped=dropped)


def _cases_source(cases: list[tuple[Args, Any]]) -> str:
    lines = "".join(f"    ({source_of(args)}, {source_of(want)}),\n" for args, want in cases)
    return "[\n" + lines + "]"


def generated_test(hardened: Hardened, seed: int) -> str:
    """A pytest file of the generated cases, for a folder task."""
    entry = hardened.task.entry_point
    return (
        f'"""Inputs generated by `codetrial harden` (seed {seed}); each expected value is '
        f'the reference\'s output."""\n\nfrom candidate import {entry}\n{comparison()}\n\n'
        f"CASES = {_cases_source(hardened.cases)}\n\n\n"
        f"def test_generated_inputs():\n    for args, want in CASES:\n"
        f"        _case({entry}, {entry!r}, args, want)\n"
    )


def generated_check(hardened: Hardened) -> str:
    """A benchmark task's test code: its own tests, then the generated cases; inside
    its `check(candidate)` when it has one (HumanEval), else as top-level code that
    calls the function by name, as its asserts do (MBPP)."""
    original = next(t.source for t in hardened.task.tests)
    generated = f"{original}\n\n{comparison()}\n\n_GENERATED = {_cases_source(hardened.cases)}\n"
    if not defines_check(parse(original)):
        entry = hardened.task.entry_point
        loop = f"for _args, _want in _GENERATED:\n    _case({entry}, {entry!r}, _args, _want)\n"
        return f"{generated}\n{loop}"
    return (
        f"{generated}_original_check = check\n\n\ndef check(candidate):\n"
        "    _original_check(candidate)\n    for args, want in _GENERATED:\n"
        "        _case(candidate, 'candidate', args, want)\n"
    )


def _docstring_prompt(spec: str) -> str:
    """A task without a code prompt (MBPP) gets its spec as one, a docstring as in
    MBPP+, without the fenced signature (the loader adds it from the solution)."""
    text = re.sub(r"```python\n.*?```\n*", "", spec.strip(), flags=re.DOTALL)
    return f'"""\n{text}\n"""\n'


def write_suite(hardened: Sequence[Hardened], name: str, out: Path, seed: int) -> Path:
    """The hardened suite, new beside the original: an EvalPlus-format JSONL for
    tasks with a `check` harness, else a folder of task folders. A ConfigError when
    there is nothing to write or the path is taken."""
    if not hardened:
        raise ConfigError(f"no task of {name!r} can be hardened: none has a reference")
    jsonl = all(h.task.harness == "check" for h in hardened)
    path = out / (f"{name}-hard.jsonl" if jsonl else f"{name}-hard")
    if path.exists():
        raise ConfigError(f"{path} exists: remove it, or pass another --out")
    out.mkdir(parents=True, exist_ok=True)
    if jsonl:
        lines = []
        for h in hardened:
            task = hardened_task(h, seed)
            prompt = task.prompt or _docstring_prompt(task.spec)
            lines.append(
                json.dumps(
                    {
                        "task_id": task.id,
                        "prompt": prompt,
                        "entry_point": task.entry_point,
                        "canonical_solution": (task.reference or "").removeprefix(task.prompt),
                        "test": task.tests[0].source,
                        "heavy_input": task.heavy_input,
                    }
                )
            )
        write_atomic(path, "\n".join(lines) + "\n")
        return path
    for h in hardened:
        task = hardened_task(h, seed)
        folder = path / task.id
        (folder / "hidden").mkdir(parents=True, exist_ok=True)
        write_atomic(folder / "spec.md", task.spec)
        write_atomic(folder / "reference.py", task.reference or "")
        if task.heavy_input:
            write_atomic(folder / HEAVY_INPUT, task.heavy_input + "\n")
        for test in task.tests:
            hidden = test.visibility is Visibility.HIDDEN
            write_atomic((folder / "hidden" if hidden else folder) / test.name, test.source)
    return path
