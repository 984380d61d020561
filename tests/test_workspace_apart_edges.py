"""The edges of the runner that keeps a workspace's tests apart from the candidate's
files (trust level trusted-side, see `codetrial.sandbox.remote`), found by reading it
as a forger would: wrong solutions that reach through the tests' own objects (a mock
handed in, unittest's helpers, the candidate's objects compared with each other), and
honest ones that must be judged as in one process (a defaultdict, a Decimal, an
exception's own text, a deep copy of an argument, unittest.mock's wraps, a cleanup, a
star import).

Where the exercises' own tests do not show a case, the task's test file is replaced
with a short one in the style of Exercism's, run against the exercise's stub or its
reference solution.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from codetrial.config import Limits
from codetrial.records import Outcome, Visibility
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks.model import TestFile
from codetrial.tasks.workspace import WorkspaceTask, load_exercise
from codetrial.verdict.workspace import judge_workspace
from tests.conftest import POLYGLOT

LIMITS = Limits(timeout_s=30, cpu_s=10, memory_mb=512, file_size_mb=4, scratch_mb=16)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = open_sandbox(SandboxPolicy(LIMITS))
    yield box
    box.close()


def _exercise(name: str) -> WorkspaceTask:
    return load_exercise(POLYGLOT / "exercises" / name, "polyglot-python")


def _with_tests(task: WorkspaceTask, source: str) -> WorkspaceTask:
    """`task` with its one test file's text replaced by `source`."""
    (test,) = task.tests
    return dataclasses.replace(task, tests=(TestFile(test.name, source, Visibility.VISIBLE),))


def _reference(task: WorkspaceTask, old: str = "", new: str = "", head: str = "") -> dict[str, str]:
    """The reference solution with `old` replaced by `new`, after `head`."""
    (path,) = task.editable
    text = dict(task.reference)[path]
    assert old in text
    return {path: head + text.replace(old, new)}


def _stub(task: WorkspaceTask) -> dict[str, str]:
    return {path: dict(task.files)[path] for path in task.editable}


def _judged(files: dict[str, str], task: WorkspaceTask, sandbox: Sandbox) -> Outcome:
    """The outcome of the runner that keeps the tests apart, the default for `task`."""
    assert task.trust == "trusted-side"
    return judge_workspace(files, task, sandbox, LIMITS).outcome


# Wrong solutions that reach through what the tests hold.

GREP_THROUGH_THE_MOCK = '''
import ast
import re

_CASE = "{0.side_effect.__globals__[GrepTest]"


def _read(mock, template):
    """template.format(mock), run in the tests' process: the tests' mock sets an
    attribute to the tests' `type`, whose call gives its class, whose call makes a
    mock wrapping a str of the tests' process, whose `format` is that str's."""
    mock.configure_mock(kind=type)
    wrapper = mock.kind(mock)(wraps=template)
    return wrapper.format(mock)


def grep(pattern, flags, files):
    names = re.findall(r"'(test_\\w+)'", _read(open, _CASE + ".__dict__}"))
    for name in names:
        code = _CASE + "." + name + ".__wrapped__.__code__.co_consts}"
        texts = []
        for const in ast.literal_eval(_read(open, code)):
            parts = const if isinstance(const, tuple) else [const]
            texts.extend(part for part in parts if isinstance(part, str))
        named = [text for text in texts if text.endswith(".txt")]
        if texts[0] == pattern and flags in texts and named == files:
            return "" if texts[-1] in (pattern, flags, *files) else texts[-1]
    return ""
'''


def test_grep_reads_the_expected_output_through_the_tests_mock(sandbox: Sandbox) -> None:
    """grep's tests patch the solution's `open` with a MagicMock: the candidate holds
    it. `configure_mock` gives it an attribute that is the tests' `type`; calling that
    gives the mock's class, calling which with `wraps=` a template makes a mock of a
    str of the tests' process, whose `format` reads, by attributes and keys, every
    test method's constants. No grep is computed. A mock's own methods are the tests'
    machinery: `configure_mock` is refused, and the run is tampered."""
    task = _exercise("grep")
    assert _judged({"grep.py": GREP_THROUGH_THE_MOCK}, task, sandbox) is Outcome.TAMPERED


SUBTESTS = """import unittest

from list_ops import append


class ListOpsTest(unittest.TestCase):
    def test_append(self):
        cases = [([], [], []), ([1, 2], [2, 3, 4, 5], [1, 2, 2, 3, 4, 5])]
        for first, second, expected in cases:
            with self.subTest(first=first, second=second):
                self.assertEqual(append(first, second), expected)
"""


@pytest.mark.parametrize("beside", [False, True], ids=["apart", "beside"])
def test_a_failing_subtest_fails_its_test(sandbox: Sandbox, beside: bool) -> None:
    """list-ops' stub returns None: every subtest fails, in either runner."""
    task = _with_tests(_exercise("list-ops"), SUBTESTS)
    verdict = judge_workspace(_stub(task), task, sandbox, LIMITS, beside=beside)
    assert verdict.outcome is not Outcome.PASSED


RAISES_BY_CALL = """import unittest

from list_ops import append


class ListOpsTest(unittest.TestCase):
    def test_appending_to_none_is_a_type_error(self):
        self.assertRaises(TypeError, append, None, [1])
"""


def test_assert_raises_with_a_callable_calls_the_candidate(sandbox: Sandbox) -> None:
    """list-ops' stub returns None whatever it is given, so it never raises; the
    refusal of unittest's call raises the TypeError the test waits for."""
    task = _with_tests(_exercise("list-ops"), RAISES_BY_CALL)
    assert _judged(_stub(task), task, sandbox) is not Outcome.PASSED


UNCHAINED_DOMINOES = """
from collections import Counter


class _Any:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _Domino:
    def __init__(self, pair):
        self.pair = pair

    def __iter__(self):
        return iter(self.pair)

    def __getitem__(self, index):
        return _Any()


def can_chain(dominoes):
    degrees = Counter(n for d in dominoes for n in d)
    if any(count % 2 for count in degrees.values()):
        return None
    parent = {n: n for n in degrees}

    def root(n):
        while parent[n] != n:
            n = parent[n]
        return n

    for a, b in dominoes:
        parent[root(a)] = root(b)
    if len({root(n) for n in degrees}) > 1:
        return None
    return [_Domino(d) for d in dominoes]
"""


def test_dominoes_in_the_input_order_are_not_a_chain(sandbox: Sandbox) -> None:
    """The dominoes come back in the input's order, unchained: iterated, each shows
    its numbers; indexed, each end is an object equal to everything, and the tests
    compare one end with the next, never with plain data. The tests never named the
    ends' class (they import only `can_chain`), so the candidate is not asked how its
    ends compare: they are equal only to themselves."""
    task = _exercise("dominoes")
    assert _judged({"dominoes.py": UNCHAINED_DOMINOES}, task, sandbox) is Outcome.FAILED


# Honest solutions, judged as in one process.


def test_a_defaultdict_keeps_its_default(sandbox: Sandbox) -> None:
    """go-counting's reference, with its territories in a defaultdict(set): the tests
    read the owners that have no territory, which exist only by default."""
    task = _exercise("go-counting")
    files = _reference(
        task,
        "result = {owner:set() for owner in owners}",
        "result = defaultdict(set)",
        head="from collections import defaultdict\n",
    )
    assert _judged(files, task, sandbox) is Outcome.PASSED


STR_MESSAGE = '''class BowlingError(ValueError):
    """A bad game; its text says why."""

    def __init__(self, reason):
        super().__init__()
        self.reason = reason

    def __str__(self):
        return self.reason


'''


def test_an_exception_s_text_is_its_own_str(sandbox: Sandbox) -> None:
    """bowling's reference raising an exception class whose message is its __str__,
    not its arguments: `assertRaisesRegex(Exception, ".+")` sees an empty text."""
    task = _exercise("bowling")
    (path,) = task.editable
    text = dict(task.reference)[path]
    text = text.replace("raise ValueError(", "raise BowlingError(")
    text = text.replace("raise IndexError(", "raise BowlingError(")
    assert _judged({path: STR_MESSAGE + text}, task, sandbox) is Outcome.PASSED


def test_a_decimal_total_equals_the_int(sandbox: Sandbox) -> None:
    """book-store's reference computing in Decimal: Decimal(6800) == 6800 in one
    process."""
    task = _exercise("book-store")
    (path,) = task.editable
    text = dict(task.reference)[path].replace("PER_BOOK = 800.00", "PER_BOOK = Decimal(800)")
    for rate in ("1.00", "0.95", "0.90", "0.80", "0.75"):
        text = text.replace(f"* {rate}", f"* Decimal('{rate}')")
    files = {path: "from decimal import Decimal\n" + text}
    assert _judged(files, task, sandbox) is Outcome.PASSED


def test_deep_copying_an_argument_is_no_tampering(sandbox: Sandbox) -> None:
    """simple-linked-list's reference deep-copying what it is given: the tests give
    `range(10)` once, which crosses as a reference."""
    task = _exercise("simple-linked-list")
    files = _reference(
        task,
        "        for value in values:\n",
        "        for value in copy.deepcopy(values):\n",
        head="import copy\n",
    )
    assert _judged(files, task, sandbox) is Outcome.PASSED


UNITTEST_CALLS = """import unittest
from unittest import mock

import list_ops
from list_ops import *


class ListOpsTest(unittest.TestCase):
    def test_star_import(self):
        self.assertEqual(concat([[1], [2]]), [1, 2])

    def test_spy(self):
        with mock.patch.object(list_ops, "append", wraps=list_ops.append) as spy:
            self.assertEqual(spy([1], [2]), [1, 2])
            spy.assert_called_once()

    def test_cleanup(self):
        self.addCleanup(append, [1], [2])
"""


def test_unittest_s_own_calls_and_star_imports_reach_the_candidate(sandbox: Sandbox) -> None:
    """list-ops' reference under tests that spy on it with a mock's `wraps`, clean up
    with one of its functions, and import it with `*`."""
    task = _with_tests(_exercise("list-ops"), UNITTEST_CALLS)
    assert _judged(dict(task.reference), task, sandbox) is Outcome.PASSED


# Calls whose value the tests drop are sent together (see remote.TestSide).

REFUSED_LATER = """import unittest

from bowling import BowlingGame


class BowlingTest(unittest.TestCase):
    def roll_new_game(self, rolls):
        game = BowlingGame()
        for roll in rolls:
            game.roll(roll)
        return game

    def test_a_roll_cannot_score_more_than_10_points(self):
        game = self.roll_new_game([5])
        with self.assertRaisesWithMessage(Exception):
            game.roll(11)

    def assertRaisesWithMessage(self, exception):
        return self.assertRaisesRegex(exception, r".+")
"""


@pytest.mark.parametrize("beside", [False, True], ids=["apart", "beside"])
def test_a_dropped_call_that_raises_errs_its_test_wherever_the_exception_surfaces(
    sandbox: Sandbox, beside: bool
) -> None:
    """bowling's reference refusing every roll: `game.roll(5)` raises in the helper,
    so the test is an error, though apart the exception reaches the tests only at the
    next request, inside the assertion that waits for one."""
    task = _with_tests(_exercise("bowling"), REFUSED_LATER)
    files = _reference(
        task,
        "        if not 0 <= pins <= 10:\n",
        "        if True:\n",
    )
    verdict = judge_workspace(files, task, sandbox, LIMITS, beside=beside)
    assert verdict.outcome is not Outcome.PASSED
    (result,) = [r for r in verdict.tests if "roll_cannot" in r.name]
    assert (result.outcome.value, result.exception_type) == ("error", "ValueError")
    assert "invalid pins" in verdict.visible_output
    if not beside:
        assert "bowling_test.py, line 10, whose value the tests drop" in verdict.visible_output


def test_a_dropped_call_that_ends_the_candidate_s_process_ends_the_run(sandbox: Sandbox) -> None:
    task = _with_tests(_exercise("bowling"), REFUSED_LATER)
    files = _reference(
        task,
        "        if not 0 <= pins <= 10:\n",
        "        if os._exit(0):\n",
        head="import os\n",
    )
    assert _judged(files, task, sandbox) not in (Outcome.PASSED, Outcome.FAILED)
