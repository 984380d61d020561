"""Judge a workspace: the task's own tests, against the files a candidate leaves.

Trust level "trusted-side" (every task whose tests do not read their callers'
frames): the tests run in a sandbox of their own, and the candidate's modules in
another; the tests reach its objects only through requests, and everything they
compare with expected data crosses as plain data (see `codetrial.sandbox.remote`).
Nothing the candidate's code does in its own process reaches the tests' process or
the channel to the trusted side.

Trust level "in-sandbox" (tests that read frames): the tests share a process with the
candidate's objects, so the verdict is only as honest as that process. The trusted
side does what it can from outside it, for both runners:

- it sends the test files from pristine copies every run (the runner imports them from
  memory, see `codetrial.sandbox.testrun`);
- it knows before the run which tests there are, read from the test files' syntax, and
  requires a record for each of them, each once, with this run's nonce, then the end
  record, then the child's own exit;
- a run with a collection error, a missing, extra or unsigned record, or a stop by a
  limit is never a pass;
- beside the candidate's files, it plants sentinel tests in a test file for every run
  (see `codetrial.verdict.sentinels`): a run whose sentinels did not report as
  planted, or whose test machinery changed, is `tampered`; apart from them, a
  candidate's process that breaks the protocol or asks the tests' process for what
  it never offered is `tampered`.

What the in-sandbox runner cannot resist: code that searches its own process for the
runner's nonce and channel and writes records itself, or that bends only the tests it
knows by name. Function tasks never come here: their tests run on the trusted side.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codetrial.config import Limits
from codetrial.edits import EditFormat, Malformed
from codetrial.records import Outcome, TestOutcome, TestResult, Verdict, Visibility
from codetrial.sandbox import Sandbox, TestRun
from codetrial.syntax import described, parse
from codetrial.tasks.model import TestFile
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict.decide import FEEDBACK_CHARS, classify, stopped_or_tampered, usage_of
from codetrial.verdict.sentinels import Sentinel, betrayed, lineage, plant_methods

_OUTCOMES = frozenset(TestOutcome)
# A sentinel planted to fail that is derived from a test of the file fails, or stops
# with an error where the candidate's code raised before the comparison; one that
# passed or was skipped did not report as planted.
_FAILING = frozenset({TestOutcome.FAILED.value, TestOutcome.ERROR.value})


def _test_cases(tree: ast.Module) -> dict[str, list[str]]:
    """Class name -> its test methods, own and inherited from the file's classes, for
    the file's classes that derive (within the file) from unittest's TestCase: what
    unittest's loader finds in them, mixins' methods included."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    cases = {}
    for name in classes:
        ancestry = lineage(classes, name)
        if ancestry.is_case:
            cases[name] = sorted(
                {
                    n.name
                    for node in ancestry.classes
                    for n in node.body
                    if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
                }
            )
    return cases


@functools.cache
def _expected(tests: tuple[TestFile, ...]) -> frozenset[str]:
    """expected_tests, once per task's test files rather than once per candidate."""
    return frozenset(expected_tests({test.name: test.source for test in tests}))


def expected_tests(tests: Mapping[str, str]) -> set[str]:
    """The record ids the runner must send, read from the test files' syntax alone."""
    expected: set[str] = set()
    for path, source in tests.items():
        tree = parse(source, path)
        for case, methods in _test_cases(tree).items():
            expected.update(f"{path}::{case}::{method}" for method in methods)
        expected.update(
            f"{path}::{node.name}"
            for node in tree.body
            if isinstance(node, ast.FunctionDef)
            and node.name.startswith("test")
            and not node.args.args
            and not node.args.posonlyargs
        )
    return expected


def _result(record: dict[str, Any]) -> TestResult:
    return TestResult(
        name=str(record["test"]),
        visibility=Visibility.VISIBLE,
        outcome=TestOutcome(record.get("outcome", "error")),
        exception_type=record.get("exception"),
        duration_s=float(record.get("seconds", 0.0)),
    )


def candidate_modules(files: Mapping[str, str], tests: Mapping[str, str]) -> dict[str, str]:
    """The candidate's Python files, test files aside: the name each imports as ->
    its path."""
    return {
        path.removesuffix(".py").removesuffix("/__init__").replace("/", "."): path
        for path in sorted(files)
        if path.endswith(".py") and path not in tests
    }


@functools.cache
def _imported(tests: tuple[TestFile, ...]) -> tuple[str, ...]:
    """The modules the test files import in their own top-level statements, in the
    order the runner meets them: once per task's test files rather than once per
    candidate."""
    names: list[str] = []
    for test in sorted(tests, key=lambda test: test.name):
        try:
            tree = parse(test.source, test.name)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found = [node.module]
            else:
                continue
            names += [name for name in found if name not in names]
    return tuple(names)


def signed(run: TestRun, nonce: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The records the runner sent with this run's nonce before its end record, and
    the problems that keep the run from being trusted: records that are not the
    runner's (unsigned, or sent after the end), and a runner that never finished."""
    records: list[dict[str, Any]] = []
    foreign = 0
    ended = False
    for record in run.records():
        if record.get("nonce") != nonce or ended:
            foreign += 1
        elif "end" in record:
            ended = True
        else:
            records.append(record)
    problems = [f"{foreign} record(s) that are not this run's runner's"] if foreign else []
    return records, problems + ([] if ended else ["the runner did not finish"])


@dataclass(frozen=True)
class _Collected:
    """What a run reported: the task's tests' results, the problems that keep it from
    being complete (none: every expected test, sentinels included, reported once,
    signed, then the end), the failures' text, and the evidence of tampering (what
    the sentinels reported that they were not planted to, a changed test machinery)."""

    results: list[TestResult]
    problems: list[str]
    failures: list[str]
    tampering: list[str]


def _collect(
    run: TestRun, nonce: str, expected: frozenset[str], planted: Sequence[Sentinel]
) -> _Collected:
    sentinels = {s.node for s in planted}
    results: list[TestResult] = []
    reported: dict[str, dict[str, Any]] = {}
    uncollected: set[str] = set()
    problems: list[str] = []
    output: list[str] = []
    tampering: list[str] = []
    every: list[str] = []
    records, untrusted = signed(run, nonce)
    for record in records:
        if "test" in record and record.get("outcome") in _OUTCOMES:
            name = str(record["test"])
            reported[name] = record
            every.append(name)
            if name in sentinels:
                continue
            results.append(_result(record))
            if record["outcome"] != TestOutcome.PASSED:
                output.append(f"FAILED {name}\n{record.get('trace', '')}")
        elif "collection_error" in record:
            uncollected.add(str(record["collection_error"]))
            problems.append(f"a test file failed to import: {record['collection_error']}")
            output.append(
                f"ERROR collecting {record['collection_error']}\n{record.get('trace', '')}"
            )
        elif "tampered" in record:
            changed = f"the code under test changed the test machinery: {record['tampered']}"
            tampering.append(changed)
        elif "interfered" in record and isinstance(record["interfered"], list):
            tampering.extend(str(what) for what in record["interfered"])
    if len(set(every)) != len(every) or set(every) != expected | sentinels:
        missing = len(expected - set(every))
        problems.append(f"{len(results)} results for {len(expected)} tests ({missing} missing)")
    if untrusted:
        tampering = []
    else:
        tampering += betrayed(planted, reported, uncollected, failing=_FAILING)
    return _Collected(results, problems + untrusted, output, tampering)


def apply_edit(
    response: str,
    task: WorkspaceTask,
    edit_format: EditFormat,
    workspace: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], Verdict | None]:
    """The files the model may change as `response` in `edit_format` leaves them, applied
    to `workspace` (those files as an earlier try left them; the task's at first). When
    it cannot be applied, they stay as they were and the verdict is `malformed_edit`
    with the reason; otherwise there is no verdict yet."""
    files = dict(task.files if workspace is None else workspace)
    applied = edit_format.apply(response, files, task.editable)
    if isinstance(applied, Malformed):
        message = f"The edit could not be applied ({applied.kind.value}): {applied.reason}"
        return files, Verdict(Outcome.MALFORMED_EDIT, gate=None, detail=message, feedback=message)
    return files | applied.files, None


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    """A unified diff, file by file, of what `after` changed in `before` (path -> text)."""
    parts: list[str] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path, ""), after.get(path, "")
        if old != new:
            lines = difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                f"a/{path}" if path in before else "/dev/null",
                f"b/{path}",
            )
            parts.extend(lines)
    return "".join(line if line.endswith("\n") else line + "\n" for line in parts)


def _syntax_error(files: Mapping[str, str]) -> str | None:
    """The first Python file that does not compile, said as Python says it."""
    for path, text in files.items():
        if path.endswith(".py"):
            try:
                parse(text, path)
            except SyntaxError as exc:
                return described(exc, path)
    return None


def trimmed(failures: str, tail: str, limit: int = FEEDBACK_CHARS) -> str:
    """Test output for a model, at most `limit` characters: the failures' lines from
    the first, as many as fit, with a note of how many were shown, then the `tail`
    (the problems and the count; its end, when it alone would take half the room)."""
    if len(tail) > limit // 2:
        tail = "..." + tail[-(limit // 2 - 3) :]
    if len(failures) + len(tail) + 1 <= limit:
        return f"{failures}\n{tail}".strip()
    lines = failures.splitlines()
    room = limit - len(tail) - len(f"\n... (cut: {len(lines)} of {len(lines)} lines shown)\n")
    kept: list[str] = []
    for line in lines:
        room -= len(line) + 1
        if room < 0:
            break
        kept.append(line)
    note = f"... (cut: {len(kept)} of {len(lines)} lines shown)"
    if not kept:  # a first line longer than the room: its start
        kept = [lines[0][: max(0, room + len(lines[0]) + 1)]]
    return "\n".join([*kept, note, tail])


def judge_workspace(
    files: Mapping[str, str],
    task: WorkspaceTask,
    sandbox: Sandbox,
    limits: Limits,
    *,
    guarded: bool = True,
    beside: bool = False,
) -> Verdict:
    """The verdict on the files a candidate leaves (path -> text: the task's files,
    with what it changed replaced). A Python file that does not compile is a
    syntax_error found on the trusted side, without running anything. A run whose
    sentinels did not report as planted, or whose test machinery changed, is
    `tampered`, with no feedback. `guarded=False` runs as a naive runner would,
    without sentinels, the machinery's snapshot or the captured channel: only for the
    tests that show what the defences stop. `beside=True` runs the tests beside the
    candidate's files, as a task that is "in-sandbox" is judged, whatever the task's
    trust level: for the tests and the benchmark that measure that runner."""
    workspace = dict(task.files) | dict(files)
    if (error := _syntax_error(workspace)) is not None:
        return Verdict(Outcome.SYNTAX_ERROR, gate=None, detail=error, feedback=error)
    nonce = secrets.token_hex(16)
    expected = _expected(task.tests)
    running: contextlib.AbstractContextManager[TestRun]
    if guarded and not beside and task.trust == "trusted-side":
        planted: Sequence[Sentinel] = ()
        modules = candidate_modules(workspace, task.test_sources)
        # The candidate's process imports these as it starts, before the tests ask.
        imports = [name for name in _imported(task.tests) if name in modules]
        running = sandbox.split_run(
            workspace, task.test_sources, nonce, modules, limits, imports=imports
        )
    else:
        tests, planted = plant_methods(task.test_sources) if guarded else (task.test_sources, ())
        running = sandbox.test_run(workspace, tests, nonce, limits, guarded=guarded)
    with running as run:
        collected = _collect(run, nonce, expected, planted)
    results, problems, failures = collected.results, collected.problems, collected.failures
    passed = sum(r.outcome is TestOutcome.PASSED for r in results)
    tail = "\n".join([*problems, f"{passed} passed, {len(expected) - passed} failed"])
    outcome, detail = stopped_or_tampered(run, collected.tampering, tail) or (
        classify(None, results, complete=not problems),
        "",
    )
    output = "\n".join([*failures, tail])
    feedback = None
    # A forged run gets no feedback: what it could say would teach how it was caught.
    if outcome not in (Outcome.PASSED, Outcome.TAMPERED):
        feedback = trimmed("\n".join([detail, *failures]).strip(), tail)
    return Verdict(
        outcome,
        gate=None,
        tests=tuple(results),
        visible_output=output,
        detail=detail,
        feedback=feedback,
        usage=usage_of(run.exits),
    )
