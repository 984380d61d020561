"""The protocol between a workspace's test process and the candidate's process, with
two real processes on a pair of pipes (the sandbox around them is tested with the
exercises): what crosses by value, what as a reference, what the test side serves and
what it refuses."""

from __future__ import annotations

import importlib.util
import os
import sys
import unittest
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

SANDBOX = Path(__file__).resolve().parents[1] / "src" / "codetrial" / "sandbox"
sys.path.insert(0, str(SANDBOX))
import remote  # noqa: E402  (the runtime module, as the sandbox loads it)

CANDIDATE = """
class Sneaky(list):
    def __eq__(self, other):
        return True
    def __iter__(self):
        return iter([1, 2, 3])
    def __len__(self):
        return 3

class Everything:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
    def __contains__(self, item):
        return True
    def __sub__(self, other):
        return 0
    def difference(self, other):
        return set()

class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)
    def moved(self, dx, *, name=None, value=None):
        return Point(self.x + dx, self.y), name, value

class Underflow(IndexError):
    pass

def sneaky():
    return Sneaky([9])

def everything():
    return Everything()

def pop(items):
    if not items:
        raise Underflow("empty", 7)
    return items.pop()

def apply(callback, value):
    return callback(value)

kept = []

def keep(callback):
    kept.append(callback)

def call_kept(value):
    return kept[-1](value)

def walk(callback):
    return callback.__globals__()

def ask(callback):
    end = object.__getattribute__(callback, "_ct_end")
    return end.request("method", (callback, "__globals__"))

def use_mock(sock):
    data = sock.recv(3)
    sock.reset_mock()
    return data

def exits():
    raise SystemExit(3)

def numbers():
    yield 1
    yield 2

class Tally:
    def __init__(self):
        self.sum = 0
    def add(self, n):
        if n < 0:
            raise ValueError(f"{n} is negative")
        self.sum += n
    def total(self):
        return self.sum

class Shadowed:
    def __init__(self):
        self.label = "its own"
    def label(self):
        return "its class's"

class Dynamic:
    def size(self):
        return 1
    def __getattr__(self, name):
        return name.upper()
"""


def _imported(end: remote.TestSide) -> Any:
    """The candidate's module `mod`, imported as a test file imports it."""
    finder = remote.Modules(end, {"mod": "mod.py"})
    spec = finder.find_spec("mod")
    module = importlib.util.module_from_spec(spec)
    finder.exec_module(module)
    return module


@pytest.fixture
def end() -> Iterator[remote.TestSide]:
    """The test side of a candidate process that serves CANDIDATE as module `mod`."""
    tests_in, candidate_out = os.pipe()
    candidate_in, tests_out = os.pipe()
    child = os.fork()
    if child == 0:  # the candidate's process
        os.close(tests_in)
        os.close(tests_out)
        try:
            module = type(sys)("mod")
            exec(CANDIDATE, module.__dict__)
            sys.modules["mod"] = module
            remote.CandidateSide(
                remote.Wire(candidate_in, candidate_out), lambda e: ""
            ).serve_forever()
        finally:
            os._exit(0)
    os.close(candidate_in)
    os.close(candidate_out)
    side = remote.TestSide(remote.Wire(tests_in, tests_out))
    yield side
    os.close(tests_in)
    os.close(tests_out)
    os.waitpid(child, 0)


def test_plain_data_crosses_by_value_and_a_builtin_subclass_as_the_builtin(
    end: remote.TestSide,
) -> None:
    mod = _imported(end)
    value = mod.sneaky()
    assert type(value) is list and value == [9]
    assert value != [1, 2, 3]


def test_an_object_equal_to_everything_equals_no_plain_data(end: remote.TestSide) -> None:
    mod = _imported(end)
    forged = mod.everything()
    assert forged != [1, 2]
    assert not forged == 5  # noqa: SIM201
    assert [forged] != [[1, 2]]
    with pytest.raises(TypeError):
        forged < 3  # noqa: B015


def test_unittest_s_assertions_never_hand_a_candidate_s_object_the_tests_data(
    end: remote.TestSide,
) -> None:
    """assertIn asks `expected in first`, assertAlmostEqual `first - expected`,
    assertSetEqual `first.difference(expected)`: each would let the object answer
    with the expected data in hand. From a test's own code the same operations are
    the candidate's to answer."""
    mod = _imported(end)
    forged = mod.everything()
    case = unittest.TestCase()
    for assertion in (
        lambda: case.assertIn(3, forged),
        lambda: case.assertAlmostEqual(forged, 1.5),
        lambda: case.assertSetEqual(forged, {1}),
    ):
        with pytest.raises((TypeError, AssertionError), match="hand it the tests' data"):
            assertion()
    assert 3 in forged
    assert forged - 1 == 0


def test_the_candidate_s_objects_compare_by_its_own_rules_and_keep_identity(
    end: remote.TestSide,
) -> None:
    mod = _imported(end)
    point = mod.Point(1, 2)
    assert point == mod.Point(1, 2)
    assert point != mod.Point(2, 2)
    assert isinstance(point, mod.Point) and not isinstance(5, mod.Point)
    assert issubclass(mod.Underflow, IndexError)
    moved, name, value = point.moved(1, name="n", value="v")
    assert (moved.x, name, value) == (2, "n", "v")
    assert mod.Point is mod.Point


def test_a_candidate_s_exception_is_a_stand_in_caught_by_name_and_by_its_builtin(
    end: remote.TestSide,
) -> None:
    mod = _imported(end)
    underflow = mod.Underflow
    with pytest.raises(IndexError) as caught:
        mod.pop([])
    assert type(caught.value) is underflow and underflow.__name__ == "Underflow"
    assert caught.value.args == ("empty", 7)
    assert mod.pop([4]) == 4
    with pytest.raises(Exception) as stopped:  # not a SystemExit in the test process
        mod.exits()
    assert type(stopped.value).__name__ == "SystemExit"
    assert not isinstance(stopped.value, SystemExit)


def test_callbacks_run_in_the_test_process_for_the_current_test_only(
    end: remote.TestSide,
) -> None:
    mod = _imported(end)
    seen: list[int] = []
    assert mod.apply(lambda v: seen.append(v) or v * 2, 21) == 42
    assert seen == [21]
    mod.keep(lambda v: v + 1)
    assert mod.call_kept(1) == 2
    end.scope()  # the next test
    with pytest.raises(ReferenceError):
        mod.call_kept(1)
    assert list(mod.numbers()) == [1, 2]


def test_reaching_into_the_test_process_through_a_callback_is_refused_and_kept(
    end: remote.TestSide,
) -> None:
    mod = _imported(end)
    with pytest.raises(AttributeError):  # a dunder of a test's object is never asked
        mod.walk(lambda: None)
    with pytest.raises(PermissionError):
        mod.ask(lambda: None)
    assert end.refused and "__globals__" in end.refused[0]


def test_a_mock_handed_in_is_called_for_what_it_stands_in_for_never_for_its_machinery(
    end: remote.TestSide,
) -> None:
    """A mock the tests pass in (paasio's sockets) answers the calls it stands in for;
    its own methods (`reset_mock`, `configure_mock`, `assert_*`) are the tests'."""
    mod = _imported(end)
    sock = mock.MagicMock()
    sock.recv.return_value = b"abc"
    with pytest.raises(PermissionError):
        mod.use_mock(sock)
    sock.recv.assert_called_once_with(3)
    assert end.refused == ["called the tests' mock's own method 'reset_mock'"]


@pytest.mark.parametrize(
    "reply",
    [
        b'{"ok": {"$builtin": "eval"}}\n',  # a built-in the tests' process does not admit
        b'{"ok": {"$own": 99}}\n',  # one of its objects it never handed out
        b'{"ok": {"$obj": ["x", "T", null]}}\n',
        b"not json\n",
        b'{"neither": 1}\n',
    ],
)
def test_a_malformed_reply_breaks_the_exchange(reply: bytes) -> None:
    tests_in, forger_out = os.pipe()
    forger_in, tests_out = os.pipe()
    os.write(forger_out, reply)
    side = remote.TestSide(remote.Wire(tests_in, tests_out))
    with pytest.raises(remote.Broken):
        side.request("import", ("mod",))
    assert isinstance(side.stopped, remote.Broken)
    for fd in (tests_in, forger_out, forger_in, tests_out):
        os.close(fd)


DROPPING = """
import unittest


class DroppingTest(unittest.TestCase):
    def add_all(self, tally, numbers):
        for n in numbers:
            tally.add(n)

    def test_adds(self):
        tally = mod.Tally()
        self.add_all(tally, range(100))
        self.assertEqual(tally.total(), 4950)

    def test_a_refusal_handled_where_it_is_raised(self):
        tally = mod.Tally()
        try:
            tally.add(-1)
        except ValueError:
            tally.add(1)
        self.assertEqual(tally.total(), 1)

    def test_a_refusal_that_surfaces_later(self):
        tally = type(self).kept = mod.Tally()
        tally.add(-1)
        tally.add(2)
        with self.assertRaises(ValueError):
            tally.total()
"""


def test_calls_whose_value_the_tests_drop_are_sent_together_and_still_fail_their_test(
    end: remote.TestSide,
) -> None:
    """`tally.add(n)` as a statement is sent with the others like it, as one request,
    before the next request that needs a reply; an exception one raised makes its
    test an error even where the tests catch it later (a naive batch would let
    assertRaises take it), and the calls after it are not made."""
    end.tests = frozenset({"dropping_test.py"})
    namespace = {"__name__": "dropping_test", "mod": _imported(end)}
    exec(compile(DROPPING, "dropping_test.py", "exec"), namespace)
    sent: list[str] = []
    write = end.wire.write
    end.wire.write = lambda line: (sent.append(line), write(line))[1]  # type: ignore[method-assign]
    outcomes = {}
    for name in ("test_adds", "test_a_refusal_handled_where_it_is_raised"):
        result = unittest.TestResult()
        namespace["DroppingTest"](name).run(result)
        outcomes[name] = (result.wasSuccessful(), end.scope(), len(sent))
    # mod.Tally, Tally(), the 100 adds together, tally.total(): a Tally's methods
    # are its class's plain functions, called by name without being read first
    assert outcomes["test_adds"] == (True, None, 4)
    assert outcomes["test_a_refusal_handled_where_it_is_raised"][:2] == (True, None)

    result = unittest.TestResult()
    namespace["DroppingTest"]("test_a_refusal_that_surfaces_later").run(result)
    late = end.scope()
    assert result.wasSuccessful()  # assertRaises took the ValueError of tally.add(-1)
    assert isinstance(late, ValueError) and str(late) == "-1 is negative"
    assert "dropping_test.py, line 25, whose value the tests drop" in late.__notes__[0]
    assert namespace["DroppingTest"].kept.total() == 0  # tally.add(2) was not made


def test_a_method_is_called_unread_only_where_reading_it_would_find_the_class_s_function(
    end: remote.TestSide,
) -> None:
    """An object's own attribute hides its class's method of that name, and a class
    with a `__getattr__` of its own reads its attributes its own way: both are read
    by a request, as in one process."""
    mod = _imported(end)
    assert mod.Shadowed().label == "its own"
    dynamic = mod.Dynamic()
    assert (dynamic.size(), dynamic.other) == (1, "OTHER")
    tally = mod.Tally()
    tally.sum = 5
    assert tally.total() == 5
