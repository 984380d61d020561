"""Prediction tasks: the model states what a program prints on one input, and a trusted
program, run in the sandbox, says what it really prints (trust level "trusted-side":
the two are compared in codetrial's process). Two scenarios, as LiveCodeBench names
them:

    output      test-output prediction: the model reads a problem's statement and one
                input, and states the output a correct program prints;
    execution   code execution (CRUXEval's output prediction): the model reads a
                program and one input, and states what that program prints.

The input is either a program's standard input, its output compared as a contest
judge compares it (or by the problem's checker), or, for a task whose `compare` is
"value", a call of a function, its output the value the call returns, written as a
Python literal and compared as a value (see `codetrial.verdict.outputs`).

Suites: `programs-output` and `programs-execution` are made from the built-in
`programs` suite (its problems' small hidden inputs, their references run to say
what is right); `livecodebench-output` and `livecodebench-execution` read
LiveCodeBench's own files for the two scenarios.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

from codetrial.errors import TaskFormatError
from codetrial.tasks.contests import release_date
from codetrial.tasks.jsonl import read_jsonl
from codetrial.tasks.programs import ProgramTask, case_name

SCENARIOS = ("output", "execution")
SMALL_INPUT, SMALL_OUTPUT = 120, 80  # characters of a case a prediction is asked about
PER_PROBLEM = 2  # inputs a problem of the programs suite gives each scenario
# What LiveCodeBench's code runs with besides the code itself: the standard library
# names its functions use without importing them.
CALL_PRELUDE = """\
import bisect, collections, functools, heapq, itertools, math, operator, re, string
from bisect import bisect_left, bisect_right, insort
from collections import Counter, OrderedDict, defaultdict, deque
from functools import cache, lru_cache, reduce
from heapq import heapify, heappop, heappush
from itertools import accumulate, combinations, count, groupby, permutations, product
from math import ceil, comb, floor, gcd, inf, isqrt, log, log2, log10, prod, sqrt
from typing import *
"""


@dataclass(frozen=True)
class PredictionTask:
    """One input whose output the model predicts: what it is `shown` (a problem's
    statement as Markdown, or in "execution" a program's code), the `input` it is
    asked about, the trusted `program` whose standard output, run on `stdin`, is the
    right answer (None when the source gives only a stated answer), the `expected`
    answer its source states (which `codetrial check --references` holds against the
    program's output), and how an answer is judged: `compare` with its tolerances,
    or the problem's `checker` (see `codetrial.kinds.program`), with one run's CPU
    and wall seconds."""

    id: str
    suite: str
    title: str
    scenario: str
    shown: str
    input: str
    program: str | None
    stdin: str = ""
    expected: str | None = None
    checker: str | None = None
    compare: str = "tokens"
    abs_tol: float = 1e-6
    rel_tol: float = 1e-6
    cpu_s: float = 2.0
    wall_s: float = 6.0
    released: str | None = None
    trust: ClassVar[str] = "trusted-side"
    policy: ClassVar[str] = "off"
    kind: ClassVar[str] = "prediction"

    @property
    def digest(self) -> str:
        """Changes whenever what the model is shown, the program that says what is
        right, its input, the stated answer, the checker, the comparison or a limit
        does."""
        judged = asdict(self)
        for field in ("id", "suite", "title", "released"):
            del judged[field]
        return hashlib.sha256(json.dumps(judged, sort_keys=True).encode()).hexdigest()


def from_programs(problems: Sequence[ProgramTask], scenario: str) -> list[PredictionTask]:
    """The prediction tasks of a program suite's problems in `scenario`: for each
    problem with a reference, its first PER_PROBLEM hidden inputs of at most
    SMALL_INPUT characters whose stated output has at most SMALL_OUTPUT (the
    statement shows the samples' outputs). In "output" the model reads the statement
    and a problem with a checker is judged by it; in "execution" it reads the
    reference, whose own output is the one answer."""
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario {scenario!r} is not one of {SCENARIOS}")
    tasks = []
    for problem in problems:
        if problem.reference is None:
            continue
        small = [
            c
            for c in problem.hidden
            if len(c.input) <= SMALL_INPUT and len(c.output) <= SMALL_OUTPUT
        ]
        output = scenario == "output"
        for case in small[:PER_PROBLEM]:
            cpu_s, wall_s = problem.seconds(case_name(False, case))
            tasks.append(
                PredictionTask(
                    id=f"{problem.id}/{case.name}",
                    suite=f"{problem.suite}-{scenario}",
                    title=problem.title,
                    scenario=scenario,
                    shown=problem.statement if output else problem.reference,
                    input=case.input,
                    program=problem.reference,
                    stdin=case.input,
                    expected=case.output,
                    checker=problem.checker if output else None,
                    compare="tokens" if problem.compare == "exact" else problem.compare,
                    abs_tol=problem.abs_tol,
                    rel_tol=problem.rel_tol,
                    cpu_s=cpu_s,
                    wall_s=wall_s,
                )
            )
    return tasks


def _text(record: dict[str, object], name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value:
        raise TaskFormatError(f"{where}: field {name!r} is missing or not a string")
    return value


def _python_literal(json_text: str, where: str) -> str:
    """A JSON value (LiveCodeBench's expected outputs) as a Python literal."""
    try:
        return repr(json.loads(json_text))
    except ValueError as exc:
        raise TaskFormatError(f"{where}: the expected output is not JSON ({exc})") from exc


def load_livecodebench_output(path: Path) -> list[PredictionTask]:
    """LiveCodeBench's test-output prediction file (one record per problem and test:
    `question_content`, `starter_code`, `function_name`, `test` as JSON text of
    [{"input", "output", "testtype"}], `test_id`): the call of the function on the
    test's input (one argument a line), judged against the test's stated output. The
    file holds no program to run: the stated output is the answer."""
    tasks = []
    for where, record in read_jsonl(path):
        name = _text(record, "function_name", where)
        try:
            tests = json.loads(_text(record, "test", where))
            first = tests[0]
            given, stated = first["input"], first["output"]
        except (ValueError, LookupError, TypeError) as exc:
            raise TaskFormatError(
                f"{where}: field 'test' must be JSON text of a list of tests with "
                f"'input' and 'output' ({exc!r})"
            ) from None
        if not isinstance(given, str) or not isinstance(stated, str):
            raise TaskFormatError(f"{where}: field 'test': input and output must be text")
        title = _text(record, "question_title", where)
        starter = str(record.get("starter_code") or "")
        statement = f"# {title}\n\n{_text(record, 'question_content', where).strip()}\n"
        if starter.strip():
            statement += f"\nFunction:\n\n```python\n{starter.rstrip()}\n```\n"
        tasks.append(
            PredictionTask(
                id=f"{_text(record, 'question_id', where)}/{record.get('test_id', 0)}",
                suite="livecodebench-output",
                title=title,
                scenario="output",
                shown=statement,
                input=f"{name}({', '.join(given.splitlines())})",
                program=None,
                expected=_python_literal(stated, where),
                compare="value",
                released=release_date(record.get("contest_date"), where),
            )
        )
    if not tasks:
        raise TaskFormatError(f"{path}: no problem in this file")
    return tasks


def load_livecodebench_execution(path: Path) -> list[PredictionTask]:
    """LiveCodeBench's code execution file (one record per sample: `id`, `code`, `input`,
    a call of the code's function, and `output`, the literal it returns): the code run
    on the call in the sandbox, after CALL_PRELUDE, prints the returned value's repr,
    the answer; the stated `output` is what `codetrial check --references` holds
    against it."""
    tasks = []
    for where, record in read_jsonl(path):
        code, call = _text(record, "code", where), _text(record, "input", where)
        sample = _text(record, "id", where)
        tasks.append(
            PredictionTask(
                id=sample,
                suite="livecodebench-execution",
                title=str(record.get("function_name") or sample),
                scenario="execution",
                shown=code,
                input=call,
                program=f"{CALL_PRELUDE}\n{code.rstrip()}\n\nprint(repr({call}))\n",
                expected=_text(record, "output", where),
                compare="value",
                released=release_date(record.get("contest_date"), where),
            )
        )
    if not tasks:
        raise TaskFormatError(f"{path}: no sample in this file")
    return tasks
