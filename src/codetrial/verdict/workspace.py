"""Judge a workspace: the task's tests run in the sandbox, next to the candidate's files.

Trust level "in-sandbox": the tests share a process with the candidate's objects, so
the verdict is only as honest as that process. The trusted side does what it can from
outside it:

- it sends the test files from pristine copies every run (the runner imports them from
  memory, see `codetrial.sandbox.testrun`);
- it knows before the run which tests there are, read from the test files' syntax, and
  requires a record for each of them, each once, with this run's nonce, then the end
  record, then the child's own exit;
- a run with a collection error, a changed test machinery, a missing, extra or
  unsigned record, or a stop by a limit is never a pass.

What this cannot resist: code that searches its own process for the runner's nonce
and channel and writes records itself. Function tasks never come here: their tests
run on the trusted side.
"""

from __future__ import annotations

import ast
import functools
import secrets
from collections.abc import Mapping
from typing import Any

from codetrial.config import Limits
from codetrial.edits import EditFormat, Malformed
from codetrial.records import Outcome, TestOutcome, TestResult, Verdict, Visibility
from codetrial.sandbox import Sandbox, TestRun
from codetrial.tasks.model import TestFile
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict import FEEDBACK_CHARS, classify

_OUTCOMES = frozenset(TestOutcome)


def _test_cases(tree: ast.Module) -> dict[str, list[str]]:
    """Class name -> its test methods, own and inherited, for the file's classes that
    derive (within the file) from unittest's TestCase."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    found: dict[str, list[str]] = {}

    def methods(name: str, seen: frozenset[str]) -> list[str] | None:
        node = classes[name]
        inherited: list[str] = []
        is_case = False
        for base in node.bases:
            base_name = ast.unparse(base)
            if base_name in ("unittest.TestCase", "TestCase"):
                is_case = True
            elif base_name in classes and base_name not in seen:
                parent = methods(base_name, seen | {name})
                if parent is not None:
                    is_case, inherited = True, inherited + parent
        own = [n.name for n in node.body
               if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]  # fmt: skip
        return sorted(set(inherited + own)) if is_case else None

    for name in classes:
        if (names := methods(name, frozenset())) is not None:
            found[name] = names
    return found


@functools.cache
def _expected(tests: tuple[TestFile, ...]) -> frozenset[str]:
    """expected_tests, once per task's test files rather than once per candidate."""
    return frozenset(expected_tests({test.name: test.source for test in tests}))


def expected_tests(tests: Mapping[str, str]) -> set[str]:
    """The record ids the runner must send, read from the test files' syntax alone."""
    expected: set[str] = set()
    for path, source in tests.items():
        tree = ast.parse(source, path)
        for case, methods in _test_cases(tree).items():
            expected.update(f"{path}::{case}::{method}" for method in methods)
        expected.update(
            f"{path}::{node.name}" for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
            and not node.args.args
        )  # fmt: skip
    return expected


def _result(record: dict[str, Any]) -> TestResult:
    return TestResult(
        name=str(record["test"]),
        visibility=Visibility.VISIBLE,
        outcome=TestOutcome(record.get("outcome", "error")),
        exception_type=record.get("exception"),
        duration_s=float(record.get("seconds", 0.0)),
    )


def _collect(
    run: TestRun, nonce: str, expected: frozenset[str]
) -> tuple[list[TestResult], list[str], list[str]]:
    """The run's per-test results, the problems that keep it from being complete (none:
    every expected test reported once, signed, then the end), and the failures' text."""
    results: list[TestResult] = []
    problems: list[str] = []
    output: list[str] = []
    ended = False
    for record in run.records():
        if record.get("nonce") != nonce or ended:
            problems.append("a record that is not this run's runner's")
        elif "test" in record and record.get("outcome") in _OUTCOMES:
            results.append(_result(record))
            if record["outcome"] != TestOutcome.PASSED:
                output.append(f"FAILED {record['test']}\n{record.get('trace', '')}")
        elif "collection_error" in record:
            problems.append(f"a test file failed to import: {record['collection_error']}")
            output.append(f"ERROR collecting {record['collection_error']}\n{record.get('trace')}")
        elif "tampered" in record:
            problems.append(f"the code under test changed the test machinery: {record['tampered']}")
        elif "end" in record:
            ended = True
    names = [r.name for r in results]
    if len(set(names)) != len(names) or set(names) != expected:
        missing = len(expected - set(names))
        problems.append(f"{len(names)} results for {len(expected)} tests ({missing} missing)")
    if not ended:
        problems.append("the runner did not finish")
    return results, problems, output


def judge_edit(
    response: str,
    task: WorkspaceTask,
    edit_format: EditFormat,
    sandbox: Sandbox,
    limits: Limits,
    workspace: Mapping[str, str] | None = None,
) -> tuple[Verdict, dict[str, str]]:
    """The verdict on a response in `edit_format`, applied to `workspace` (the task's
    files, or what an earlier try left), and the workspace after it. A response that
    cannot be applied is `malformed_edit` with the reason, and changes nothing."""
    files = dict(task.files if workspace is None else workspace)
    applied = edit_format.apply(response, files, task.editable)
    if isinstance(applied, Malformed):
        message = f"The edit could not be applied ({applied.kind.value}): {applied.reason}"
        return Verdict(Outcome.MALFORMED_EDIT, gate=None, detail=message, feedback=message), files
    files.update(applied.files)
    return judge_workspace(files, task, sandbox, limits), files


def judge_workspace(
    files: Mapping[str, str], task: WorkspaceTask, sandbox: Sandbox, limits: Limits
) -> Verdict:
    """The verdict on a workspace as the candidate left it (path -> text: the task's
    files with the edited ones replaced)."""
    nonce = secrets.token_hex(16)
    expected = _expected(task.tests)
    with sandbox.test_run(dict(files), task.test_sources, nonce, limits) as run:
        results, problems, failures = _collect(run, nonce, expected)
    outcome = classify(run.stop, results, complete=not problems)
    passed = sum(r.outcome is TestOutcome.PASSED for r in results)
    summary = f"{passed} passed, {len(expected) - passed} failed"
    output = "\n".join([*failures, *problems, summary])
    detail = f"{run.stop.value}: {run.stop_detail}" if run.stop else ""
    feedback = None if outcome is Outcome.PASSED else f"{detail}\n{output}".strip()
    return Verdict(
        outcome,
        gate=None,
        tests=tuple(results),
        visible_output=output,
        detail=detail,
        feedback=feedback[-FEEDBACK_CHARS:] if feedback else None,
    )
