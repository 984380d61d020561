"""Solution files that leave list-ops unsolved and forge its tests from inside the
process they share with them. Each attack is first shown to pass under a naive runner
(no sentinel tests, no snapshot of the test machinery, and a channel that sends
through the `json` and `os` of the moment), then judged by codetrial's two runners.
Beside the candidate's files (`beside=True`, as a task of trust level in-sandbox is
judged), the tests share its process: `tampered` where the forgery is caught, `failed`
where it cannot take hold at all. Apart from them (list-ops' own trust level,
trusted-side), none takes hold: the candidate's process has neither the test
machinery nor the channel, and the stub fails as it does alone."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from codetrial.config import Limits
from codetrial.records import Outcome, TestOutcome, Verdict
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks.workspace import WorkspaceTask, load_exercise
from codetrial.verdict.sentinels import plant_methods
from codetrial.verdict.workspace import expected_tests, judge_workspace
from tests.conftest import POLYGLOT

LIMITS = Limits(timeout_s=30, cpu_s=10, memory_mb=512, file_size_mb=4, scratch_mb=16)
SOLUTION = "list_ops.py"
LIST_OPS = POLYGLOT / "exercises" / "list-ops"
FUNCTIONS = ("append", "concat", "filter", "length", "map", "foldl", "foldr", "reverse")
# The exercise's tests are public: a forger can know each of them by name.
KNOWN = sorted(
    name.rsplit("::", 1)[1]
    for name in expected_tests({"list_ops_test.py": (LIST_OPS / "list_ops_test.py").read_text()})
)
# What the stub, whose functions all return None, fails with apart.
STUB_FAILS = r"AssertionError: None != \[\][\s\S]*0 passed, 24 failed"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = open_sandbox(SandboxPolicy(LIMITS))
    yield box
    box.close()


@pytest.fixture(scope="module")
def list_ops() -> WorkspaceTask:
    return load_exercise(LIST_OPS, "polyglot-python")


def _stub(task: WorkspaceTask) -> str:
    return dict(task.files)[SOLUTION]


def _passes_naively(attack: str, task: WorkspaceTask, sandbox: Sandbox) -> None:
    """Under a runner without the defences, the attack passes every test."""
    verdict = judge_workspace({SOLUTION: attack}, task, sandbox, LIMITS, guarded=False)
    assert verdict.outcome is Outcome.PASSED, verdict.visible_output
    assert len(verdict.tests) == len(expected_tests(task.test_sources))


def _tampered(verdict: Verdict, evidence: str) -> None:
    assert verdict.outcome is Outcome.TAMPERED, f"{verdict.detail}\n{verdict.visible_output}"
    assert re.search(evidence, verdict.detail), verdict.detail
    assert verdict.feedback is None


SUCCEEDS_ON_FAILURE = """
import unittest

unittest.TestResult.addFailure = lambda self, test, err: self.addSuccess(test)
unittest.TestResult.addError = lambda self, test, err: self.addSuccess(test)
"""


def test_a_result_that_records_failures_as_successes_is_tampered(
    list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """Sentinels planted to fail pass, and the snapshot sees TestResult changed."""
    attack = _stub(list_ops) + SUCCEEDS_ON_FAILURE
    _passes_naively(attack, list_ops, sandbox)
    verdict = judge_workspace({SOLUTION: attack}, list_ops, sandbox, LIMITS, beside=True)
    _tampered(verdict, r"sentinel \S+ planted to fail reported passed")
    assert "changed the test machinery: ['unittest.TestResult.addError'" in verdict.detail


SWALLOWS_IN_THE_OUTCOME = """
import contextlib
import unittest.case


@contextlib.contextmanager
def _swallowed(self, test_case, subTest=False):
    try:
        yield
    except Exception:
        pass


unittest.case._Outcome.testPartExecutor = _swallowed
"""

SWALLOWS_IN_ASSERT_EQUAL = """
import unittest

unittest.TestCase.assertEqual = lambda self, first, second, msg=None: None
"""


@pytest.mark.parametrize(
    ("attack", "snapshot"),
    [(SWALLOWS_IN_THE_OUTCOME, False), (SWALLOWS_IN_ASSERT_EQUAL, True)],
    ids=["_Outcome.testPartExecutor", "TestCase.assertEqual"],
)
def test_swallowing_failures_in_unittest_s_internals_is_tampered(
    list_ops: WorkspaceTask, sandbox: Sandbox, attack: str, snapshot: bool
) -> None:
    """A failure swallowed inside `unittest.case` passes the sentinels planted to
    fail. The snapshot of the test machinery does not watch `_Outcome`'s methods:
    there the sentinels alone catch it."""
    attack = _stub(list_ops) + attack
    _passes_naively(attack, list_ops, sandbox)
    verdict = judge_workspace({SOLUTION: attack}, list_ops, sandbox, LIMITS, beside=True)
    _tampered(verdict, r"sentinel \S+ planted to fail reported passed")
    assert ("changed the test machinery" in verdict.detail) is snapshot


KEEPS_ONLY_THE_KNOWN_TESTS = f"""
import unittest

_KNOWN = {KNOWN!r}
_names = unittest.TestLoader.getTestCaseNames
unittest.TestLoader.getTestCaseNames = lambda self, case: [
    name for name in _names(self, case) if name in _KNOWN
]
"""


def test_running_only_the_tests_known_by_name_is_tampered(
    list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """The exercise's tests are public: a forger that swallows failures and keeps the
    loader from finding any test it does not know by name leaves the sentinels
    unrun. They did not report: the run is tampered."""
    attack = _stub(list_ops) + SWALLOWS_IN_THE_OUTCOME + KEEPS_ONLY_THE_KNOWN_TESTS
    _passes_naively(attack, list_ops, sandbox)
    verdict = judge_workspace({SOLUTION: attack}, list_ops, sandbox, LIMITS, beside=True)
    _tampered(verdict, r"sentinel \S+ planted to (pass|fail) did not report")
    assert "changed the test machinery" not in verdict.detail


REWRITES_JSON = """
import json

_dumps = json.dumps


def _dumps_passing(record, *args, **kwargs):
    if isinstance(record, dict) and record.get("outcome") in ("failed", "error"):
        record = {k: v for k, v in record.items() if k not in ("trace", "exception")}
        record["outcome"] = "passed"
    return _dumps(record, *args, **kwargs)


json.dumps = _dumps_passing
"""

REWRITES_OS_WRITE = """
import os
import re

_write = os.write


def _write_passing(fd, data):
    if isinstance(data, bytes) and b'"nonce"' in data:
        _write(fd, re.sub(rb'"outcome": ?"(failed|error)"', b'"outcome": "passed"', data))
        return len(data)
    return _write(fd, data)


os.write = _write_passing
"""


@pytest.mark.parametrize(
    "attack", [REWRITES_JSON, REWRITES_OS_WRITE], ids=["json.dumps", "os.write"]
)
def test_rewriting_the_runner_s_records_changes_nothing(
    list_ops: WorkspaceTask, sandbox: Sandbox, attack: str
) -> None:
    """The channel's writer and serializer were taken before the solution module was
    imported: rebinding `json.dumps` or `os.write` from it changes no record, and the
    stub's tests fail as they do without it."""
    attack = _stub(list_ops) + attack
    _passes_naively(attack, list_ops, sandbox)
    verdict = judge_workspace({SOLUTION: attack}, list_ops, sandbox, LIMITS, beside=True)
    assert verdict.outcome is Outcome.FAILED, verdict.detail
    assert not any(t.outcome is TestOutcome.PASSED for t in verdict.tests)
    assert verdict.feedback is not None


EQUAL_TO_EVERYTHING = f"""
class _Same:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


for _name in {FUNCTIONS!r}:
    globals()[_name] = lambda *args, **kwargs: _Same()
"""

A_LIST_EQUAL_TO_EVERYTHING = f"""
class _List(list):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


for _name in {FUNCTIONS!r}:
    globals()[_name] = lambda *args, **kwargs: _List()
"""


@pytest.mark.parametrize(
    "attack", [EQUAL_TO_EVERYTHING, A_LIST_EQUAL_TO_EVERYTHING], ids=["object", "list"]
)
def test_results_equal_to_everything_are_tampered(
    list_ops: WorkspaceTask, sandbox: Sandbox, attack: str
) -> None:
    """Results that compare equal to anything pass every comparison, and so the
    sentinels derived from the file's own tests, whose expected value is a random
    token no honest result equals; the machinery is untouched."""
    _passes_naively(attack, list_ops, sandbox)
    verdict = judge_workspace({SOLUTION: attack}, list_ops, sandbox, LIMITS, beside=True)
    _tampered(verdict, r"sentinel \S+ planted to fail reported passed")
    assert "changed the test machinery" not in verdict.detail


# Each forgery above, and what the stub it goes after fails with apart: the list
# subclass crosses as an empty list, which five tests expect.
FORGERIES = {
    "TestResult.addFailure": (SUCCEEDS_ON_FAILURE, STUB_FAILS),
    "_Outcome.testPartExecutor": (SWALLOWS_IN_THE_OUTCOME, STUB_FAILS),
    "TestCase.assertEqual": (SWALLOWS_IN_ASSERT_EQUAL, STUB_FAILS),
    "TestLoader.getTestCaseNames": (
        SWALLOWS_IN_THE_OUTCOME + KEEPS_ONLY_THE_KNOWN_TESTS,
        STUB_FAILS,
    ),
    "json.dumps": (REWRITES_JSON, STUB_FAILS),
    "os.write": (REWRITES_OS_WRITE, STUB_FAILS),
    "object": (
        EQUAL_TO_EVERYTHING,
        r"AssertionError: <list_ops\._Same object at 0x[0-9a-f]+> != \[\][\s\S]*0 passed, 24",
    ),
    "list": (
        A_LIST_EQUAL_TO_EVERYTHING,
        r"AssertionError: Lists differ: \[\] != \[1, 2, 3, 4\][\s\S]*5 passed, 19 failed",
    ),
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_no_forgery_takes_hold_apart(
    list_ops: WorkspaceTask, sandbox: Sandbox, forgery: str
) -> None:
    """Apart, the process each forgery runs in is the candidate's: the unittest, json
    and os it patches carry no test and no record, and what its functions return
    crosses as plain data or stays its object, which a comparison with plain data
    never asks (the failure shows its repr, asked of the candidate)."""
    code, evidence = FORGERIES[forgery]
    attack = _stub(list_ops) + code
    _passes_naively(attack, list_ops, sandbox)
    verdict = judge_workspace({SOLUTION: attack}, list_ops, sandbox, LIMITS)
    assert verdict.outcome is Outcome.FAILED, verdict.detail
    assert re.search(evidence, verdict.visible_output), verdict.visible_output
    assert verdict.feedback is not None


def test_sentinels_are_neither_counted_nor_shown(list_ops: WorkspaceTask, sandbox: Sandbox) -> None:
    """The reference passes with exactly the file's tests counted; the stub fails
    with only the file's tests named in what is shown, though sentinels planted to
    fail failed beside them."""
    expected = expected_tests(list_ops.test_sources)
    reference = dict(list_ops.reference)
    verdict = judge_workspace(reference, list_ops, sandbox, LIMITS, beside=True)
    assert verdict.outcome is Outcome.PASSED, verdict.detail
    assert {t.name for t in verdict.tests} == expected and len(verdict.tests) == len(expected)
    stub = judge_workspace({}, list_ops, sandbox, LIMITS, beside=True)
    assert stub.outcome is Outcome.FAILED, stub.detail
    assert {t.name for t in stub.tests} == expected
    shown = f"{stub.feedback}\n{stub.visible_output}\n{stub.detail}"
    named = set(re.findall(r"list_ops_test\.py::\w+::\w+", shown))
    assert named and named <= expected
    assert f"0 passed, {len(expected)} failed" in shown


def test_sentinels_derive_from_the_file_s_tests_and_are_drawn_each_run(
    list_ops: WorkspaceTask,
) -> None:
    """Two planted to pass and four to fail, two of these a cut of one of the file's
    tests with its expected value replaced by a token drawn for the run; every
    sentinel a test the trusted side expects, and the file's own tests on their own
    lines."""
    (path,) = list_ops.test_sources
    source = list_ops.test_sources[path]
    planted, sentinels = plant_methods(list_ops.test_sources)
    assert len(sentinels) == 6 and sum(s.fails for s in sentinels) == 4
    assert expected_tests(planted) == expected_tests({path: source}) | {s.node for s in sentinels}
    assert planted[path].startswith(source.rstrip("\n"))
    derived = _derived(planted[path], {s.node.rsplit("::", 1)[1] for s in sentinels})
    imports = [node for node in ast.parse(source).body if isinstance(node, ast.ImportFrom)]
    imported = {alias.asname or alias.name for node in imports for alias in node.names}
    assert len(derived) == 2 and {call for call, _ in derived} <= imported
    again = plant_methods(list_ops.test_sources)
    tokens = {t for _, t in _derived(again[0][path], {s.node.rsplit("::", 1)[1] for s in again[1]})}
    assert len(tokens) == 2 and not tokens & {t for _, t in derived}


CYCLIC = """import unittest


class Ping(Pong):
    def test_ping(self):
        self.assertEqual(1, 1)


class Pong(Ping):
    def test_pong(self):
        self.assertEqual(2, 2)


class Last(Ping, unittest.TestCase):
    def test_last(self):
        self.assertEqual(3, 3)
"""


def test_classes_deriving_from_each_other_are_read_once() -> None:
    """A test file is read before anything runs it, so a file whose classes derive
    from each other (it could never load) must not keep the trusted side walking
    their bases for ever."""
    script = (
        "import sys\n"
        "from codetrial.verdict.sentinels import plant_methods\n"
        "from codetrial.verdict.workspace import expected_tests\n"
        "tests = {'test_cyclic.py': sys.stdin.read()}\n"
        "planted, sentinels = plant_methods(tests)\n"
        "print(len(expected_tests(tests)), len(expected_tests(planted)) - len(sentinels))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=CYCLIC, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    found, kept = map(int, done.stdout.split())
    assert found == kept


def _derived(source: str, sentinels: set[str]) -> list[tuple[str, str]]:
    """(the function called, the token) of each sentinel that compares the result of
    a call with a token of 24 hexadecimal digits."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name in sentinels:
            match node.body[-1]:
                case ast.Expr(
                    ast.Call(args=[ast.Call(func=ast.Name(called)), ast.Constant(str(token))])
                ) if re.fullmatch("[0-9a-f]{24}", token):
                    found.append((called, token))
    return found
