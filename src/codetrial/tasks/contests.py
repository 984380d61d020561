"""Public contest-problem benchmarks as program tasks, read from the user's own copies
in their published formats: LiveCodeBench's code-generation release files, APPS
(its JSONL or its folder of problems) and CodeContests (JSONL).

These files come from the internet: nothing in them is evaluated, executed or
unpickled freely. LiveCodeBench's private cases are a pickled string; they are read
only through `plain_pickle`, which admits the opcodes of plain strings, numbers,
lists and dicts and no global at all. A reference solution a file carries runs only
in the sandbox, as every reference does.

APPS's call-based problems (a function called with arguments) are function tasks, a
suite of their own (`load_apps_calls`), judged on the trusted side by a check that
compares each result as APPS's evaluator does. Problems no task here can hold
honestly are left out and counted in one logged warning: LiveCodeBench's functional
problems and APPS's call-based ones whose function is a method of a class
`Solution`, and CodeContests problems that read or write named files.
"""

from __future__ import annotations

import ast
import base64
import binascii
import io
import json
import logging
import math
import pickle
import pickletools
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from string import Template
from typing import Any

from codetrial.errors import TaskFormatError
from codetrial.records import Visibility
from codetrial.syntax import parse
from codetrial.tasks.files import read_task_file
from codetrial.tasks.jsonl import read_jsonl
from codetrial.tasks.model import Signature, Task, TestFile
from codetrial.tasks.programs import WALL_PER_CPU, Case, ProgramTask

log = logging.getLogger(__name__)

UNPACKED_CAP = 512 * 1024 * 1024  # bytes a compressed field may unpack to
PYTHON3 = 3  # CodeContests' language number for Python 3
_PLAIN_OPCODES = frozenset(
    """
    PROTO FRAME STOP MARK POP POP_MARK DUP
    MEMOIZE PUT BINPUT LONG_BINPUT GET BINGET LONG_BINGET
    STRING BINSTRING SHORT_BINSTRING UNICODE BINUNICODE SHORT_BINUNICODE BINUNICODE8
    INT BININT BININT1 BININT2 LONG LONG1 LONG4 FLOAT BINFLOAT NONE NEWTRUE NEWFALSE
    EMPTY_LIST APPEND APPENDS LIST EMPTY_DICT SETITEM SETITEMS DICT
    EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3
    """.split()  # noqa: SIM905 (grouped by what they build)
)  # what pickles of plain strings, numbers, lists, dicts and tuples are made of


class _NoGlobals(pickle.Unpickler):
    """An unpickler that finds no class or function: no object but a plain value can
    be built, and nothing can be called."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refers to {module}.{name}")


def plain_pickle(data: bytes, where: str) -> object:
    """The plain value (strings, numbers, lists, dicts, tuples) a pickle holds; a
    TaskFormatError naming `where` for any other pickle, which is never run."""
    try:
        for opcode, _, _ in pickletools.genops(data):
            if opcode.name not in _PLAIN_OPCODES:
                raise TaskFormatError(
                    f"{where}: the pickle holds more than plain strings and numbers "
                    f"(opcode {opcode.name}); it is refused unread"
                )
        return _NoGlobals(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, ValueError, EOFError, MemoryError) as exc:
        raise TaskFormatError(f"{where}: not a pickle of plain values ({exc})") from exc


def _unpacked(text: str, where: str) -> bytes:
    """Base64 of zlib-compressed bytes, unpacked up to UNPACKED_CAP."""
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
        inflater = zlib.decompressobj()
        data = inflater.decompress(packed, UNPACKED_CAP)
    except (UnicodeEncodeError, binascii.Error, zlib.error) as exc:
        raise TaskFormatError(f"{where}: neither JSON nor base64 of zlib data ({exc})") from exc
    if inflater.unconsumed_tail:
        raise TaskFormatError(f"{where}: unpacks to more than {UNPACKED_CAP >> 20} MiB")
    return data


def _json_field(record: dict[str, Any], name: str, where: str) -> Any:
    """A field holding JSON as a string (or the value itself, as some copies hold); an
    empty string, as APPS holds for what a problem lacks, is None."""
    value = record.get(name)
    if not isinstance(value, str):
        return value
    if not value:
        return None
    try:
        return json.loads(value)
    except ValueError as exc:
        raise TaskFormatError(f"{where}: field {name!r} is not JSON ({exc})") from exc


def _text(record: dict[str, Any], name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value:
        raise TaskFormatError(f"{where}: field {name!r} is missing or not a string")
    return value


def _cases(pairs: Iterable[tuple[object, object]], where: str) -> tuple[Case, ...]:
    cases = []
    for number, (given, expected) in enumerate(pairs, start=1):
        if not isinstance(given, str) or not isinstance(expected, str):
            raise TaskFormatError(f"{where}: case {number}: input and output must be text")
        cases.append(Case(str(number), given, expected))
    return tuple(cases)


def _skipped(source: Path, skipped: Counter[str], tasks: Sequence[Task | ProgramTask]) -> None:
    """Says what was left out; a TaskFormatError when nothing is left."""
    said = "; ".join(f"{count} {why}" for why, count in sorted(skipped.items()))
    if not tasks:
        raise TaskFormatError(
            f"{source}: no problem this suite judges" + (f" ({said})" * bool(said))
        )
    if skipped:
        log.warning("%s: %d problems loaded, %s left out", source, len(tasks), said)


def _statement(title: str, text: str) -> str:
    return f"# {title}\n\n{text.strip()}\n"


# LiveCodeBench


def _lcb_cases(record: dict[str, Any], field: str, where: str) -> list[dict[str, Any]]:
    """A test-case field: JSON text, or (private cases of newer releases) base64 of a
    zlib-compressed pickle of JSON text."""
    value = record.get(field)
    if not isinstance(value, str):
        raise TaskFormatError(f"{where}: field {field!r} is missing or not a string")
    try:
        cases = json.loads(value)
    except ValueError:
        held = plain_pickle(
            _unpacked(value, f"{where}: field {field!r}"), f"{where}: field {field!r}"
        )
        if not isinstance(held, str):
            raise TaskFormatError(
                f"{where}: field {field!r}: the pickle holds no JSON text"
            ) from None
        try:
            cases = json.loads(held)
        except ValueError as exc:
            raise TaskFormatError(
                f"{where}: field {field!r}: pickled text is not JSON ({exc})"
            ) from exc
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise TaskFormatError(f"{where}: field {field!r} must be a list of test cases")
    return cases


def release_date(value: object, where: str) -> str:
    """An ISO date or date and time, as the date."""
    try:
        return datetime.fromisoformat(str(value)).date().isoformat()
    except ValueError:
        raise TaskFormatError(
            f"{where}: field 'contest_date' is not an ISO date ({value!r:.40})"
        ) from None


def load_livecodebench(path: Path) -> list[ProgramTask]:
    """LiveCodeBench code-generation problems from one of its release files; its
    functional (LeetCode) problems are left out and counted."""
    tasks, skipped = [], Counter[str]()
    for where, record in read_jsonl(path):
        public = _lcb_cases(record, "public_test_cases", where)
        private = _lcb_cases(record, "private_test_cases", where)
        kinds = {c.get("testtype") for c in public + private}
        if kinds == {"functional"}:
            skipped["functional (LeetCode) problems"] += 1
            continue
        if kinds != {"stdin"}:
            raise TaskFormatError(
                f"{where}: a problem's test types must all be 'stdin' or all "
                f"'functional', not {sorted(map(str, kinds))}"
            )
        title = _text(record, "question_title", where)
        tasks.append(
            ProgramTask(
                id=_text(record, "question_id", where),
                suite="livecodebench",
                title=title,
                statement=_statement(title, _text(record, "question_content", where)),
                samples=_cases(((c.get("input"), c.get("output")) for c in public), where),
                hidden=_cases(((c.get("input"), c.get("output")) for c in private), where),
                released=release_date(record.get("contest_date"), where),
            )
        )
    _skipped(path, skipped, tasks)
    return tasks


# APPS


UNTESTED = "problems without test cases"


@dataclass(frozen=True)
class _AppsProblem:
    """One APPS problem as published: where it was read, its id, its question, its
    `input_output` object (empty for a problem published without cases), its
    solutions and its starter code."""

    where: str
    id: str
    question: str
    io_spec: dict[str, Any]
    solutions: tuple[str, ...]
    starter: str

    @property
    def cases(self) -> list[tuple[object, object]]:
        inputs, outputs = self.io_spec.get("inputs"), self.io_spec.get("outputs")
        if (
            not isinstance(inputs, list)
            or not isinstance(outputs, list)
            or len(inputs) != len(outputs)
        ):
            raise TaskFormatError(
                f"{self.where}: 'inputs' and 'outputs' must be lists of one length"
            )
        if not inputs:
            raise TaskFormatError(f"{self.where}: no test case")
        return list(zip(inputs, outputs, strict=True))


def _apps_problem(
    where: str, problem_id: str, question: str, io_spec: object, solutions: object, starter: object
) -> _AppsProblem:
    if io_spec is not None and not isinstance(io_spec, dict):
        raise TaskFormatError(f"{where}: field 'input_output' must be an object")
    if solutions is not None and not (
        isinstance(solutions, list) and all(isinstance(s, str) for s in solutions)
    ):
        raise TaskFormatError(f"{where}: field 'solutions' must be a list of programs")
    return _AppsProblem(
        where, problem_id, question, io_spec or {}, tuple(solutions or ()), str(starter or "")
    )


def _json_file(file: Path) -> object:
    try:
        return json.loads(read_task_file(file)) if file.is_file() else None
    except ValueError as exc:
        raise TaskFormatError(f"{file}: not JSON ({exc})") from exc


def _apps_problems(path: Path) -> Iterator[_AppsProblem]:
    """The problems of APPS's JSONL file or of its folder of problem folders (those
    holding question.txt)."""
    if path.is_file():
        for where, record in read_jsonl(path):
            yield _apps_problem(
                where,
                str(record.get("problem_id", where.rsplit(":", 1)[-1])),
                _text(record, "question", where),
                _json_field(record, "input_output", where),
                _json_field(record, "solutions", where) or None,
                record.get("starter_code"),
            )
        return
    for folder in sorted(p for p in path.iterdir() if (p / "question.txt").is_file()):
        starter = folder / "starter_code.py"
        yield _apps_problem(
            str(folder / "input_output.json"),
            folder.name,
            read_task_file(folder / "question.txt"),
            _json_file(folder / "input_output.json"),
            _json_file(folder / "solutions.json"),
            read_task_file(starter) if starter.is_file() else "",
        )


def load_apps(path: Path) -> list[ProgramTask]:
    """APPS's problems that read standard input; call-based ones (with `fn_name`,
    suite apps-calls) are left out and counted."""
    tasks, skipped = [], Counter[str]()
    for problem in _apps_problems(path):
        if not problem.io_spec:
            skipped[UNTESTED] += 1
            continue
        if "fn_name" in problem.io_spec:
            skipped["call-based problems (fn_name: see suite apps-calls)"] += 1
            continue
        cases = _cases(problem.cases, problem.where)
        title = f"APPS {problem.id}"
        tasks.append(
            ProgramTask(
                id=f"apps/{problem.id}",
                suite="apps",
                title=title,
                statement=_statement(title, problem.question),
                samples=cases[:1],
                hidden=cases[1:],
                reference=problem.solutions[0] if problem.solutions else None,
            )
        )
    _skipped(path, skipped, tasks)
    return tasks


CALLS_CHECK = """\
import json

CASES = json.loads($cases)


def check(candidate):
    for number, (arguments, expected) in enumerate(CASES, start=1):
        got = candidate(*arguments)
        if isinstance(got, tuple):
            got = list(got)
        unwrapped = isinstance(expected, list) and expected and got == expected[0]
        assert got == expected or unwrapped, (
            f"case {number}: $name(*{arguments!r}) returned {got!r}, expected {expected!r}"
        )
"""


def _calls_check(name: str, cases: list[tuple[object, object]], visibility: Visibility) -> TestFile:
    """A check(candidate) that calls the function with each case's arguments and
    compares its result as APPS's own evaluator does (a tuple as a list; an expected
    value that is a list matches its first item too). The cases are JSON text
    in a string literal, read by json.loads: no part of the file's data is code."""
    source = Template(CALLS_CHECK).substitute(cases=repr(json.dumps(cases)), name=name)
    return TestFile("check.py", source, visibility)


def _function(problem: _AppsProblem, name: str) -> Signature | None:
    """The signature of the top-level function `name`, from the starter code or else
    the first solution; None when neither defines one (a method of a class)."""
    for source in (problem.starter, *problem.solutions[:1]):
        text = source.rstrip()  # starter code ends at the body it leaves to write
        try:
            tree = parse(f"{text}\n    ..." if text.endswith(":") else text)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return Signature.parse(f"def {name}({ast.unparse(node.args)}):")
    return None


def load_apps_calls(path: Path) -> list[Task]:
    """APPS's call-based problems (with `fn_name`) as function tasks: the function is
    called with each case's arguments on the trusted side. Those whose function is a
    method of a class, and those that read standard input (suite apps), are left out
    and counted."""
    tasks, skipped = [], Counter[str]()
    for problem in _apps_problems(path):
        if not problem.io_spec:
            skipped[UNTESTED] += 1
            continue
        name = problem.io_spec.get("fn_name")
        if name is None:
            skipped["problems that read standard input (see suite apps)"] += 1
            continue
        if not isinstance(name, str) or not name.isidentifier():
            raise TaskFormatError(f"{problem.where}: field 'fn_name' is not a function's name")
        signature = _function(problem, name)
        if signature is None:
            skipped["problems whose function is a method of a class"] += 1
            continue
        cases = problem.cases
        if not all(isinstance(arguments, list) for arguments, _ in cases):
            raise TaskFormatError(f"{problem.where}: each of 'inputs' must be a list of arguments")
        title = f"APPS {problem.id}"
        tests: tuple[TestFile, ...] = (_calls_check(name, cases[:1], Visibility.VISIBLE),)
        if cases[1:]:
            tests += (_calls_check(name, cases[1:], Visibility.HIDDEN),)
        tasks.append(
            Task(
                id=f"apps/{problem.id}",
                suite="apps-calls",
                title=title,
                spec=f"# {title}\n\n{problem.question.strip()}\n\n"
                f"Write this function:\n\n```python\n{signature.source}\n```\n",
                signature=signature,
                tests=tests,
                reference=problem.solutions[0] if problem.solutions else None,
                harness="check",
                policy="stdlib",
            )
        )
    _skipped(path, skipped, tasks)
    return tasks


# CodeContests


def _tests(record: dict[str, Any], field: str, where: str) -> list[tuple[object, object]]:
    tests = record.get(field) or {"input": [], "output": []}
    if not isinstance(tests, dict):
        raise TaskFormatError(f"{where}: field {field!r} must be an object")
    given, expected = tests.get("input"), tests.get("output")
    if not isinstance(given, list) or not isinstance(expected, list) or len(given) != len(expected):
        raise TaskFormatError(
            f"{where}: field {field!r}: 'input' and 'output' must be lists of one length"
        )
    return list(zip(given, expected, strict=True))


def _python3(record: dict[str, Any], where: str) -> str | None:
    solutions = record.get("solutions") or {}
    if not isinstance(solutions, dict):
        raise TaskFormatError(f"{where}: field 'solutions' must be an object")
    languages, sources = solutions.get("language") or [], solutions.get("solution") or []
    return next(
        (
            s
            for lang, s in zip(languages, sources, strict=False)
            if lang == PYTHON3 and isinstance(s, str)
        ),
        None,
    )


def _cpu_seconds(record: dict[str, Any], where: str) -> int | None:
    limit = record.get("time_limit")
    if limit is None:
        return None
    if not isinstance(limit, dict):
        raise TaskFormatError(f"{where}: field 'time_limit' must be {{'seconds', 'nanos'}}")
    seconds = limit.get("seconds") or 0
    nanos = limit.get("nanos") or 0
    if not isinstance(seconds, int) or not isinstance(nanos, int):
        raise TaskFormatError(f"{where}: field 'time_limit' must hold whole numbers")
    total = seconds + nanos / 1e9
    return max(1, math.ceil(total)) if total > 0 else None


def load_codecontests(path: Path) -> list[ProgramTask]:
    """CodeContests problems from a JSONL file; those that read or write named files
    are left out and counted."""
    tasks, skipped = [], Counter[str]()
    for where, record in read_jsonl(path):
        if record.get("input_file") or record.get("output_file"):
            skipped["problems that read or write named files"] += 1
            continue
        name = _text(record, "name", where)
        hidden = _tests(record, "private_tests", where) + _tests(record, "generated_tests", where)
        cpu_s = _cpu_seconds(record, where)
        tasks.append(
            ProgramTask(
                id=name,
                suite="codecontests",
                title=name,
                statement=_statement(name, _text(record, "description", where)),
                samples=_cases(_tests(record, "public_tests", where), where),
                hidden=_cases(hidden, where),
                reference=_python3(record, where),
                cpu_s=cpu_s,
                wall_s=None if cpu_s is None else WALL_PER_CPU * cpu_s,
            )
        )
    _skipped(path, skipped, tasks)
    return tasks
