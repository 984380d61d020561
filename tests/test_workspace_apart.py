"""Solution files that attack the runner that keeps a workspace's tests apart from
the candidate's files (trust level trusted-side): the tests in one sandboxed process,
the candidate's modules in another, reached only through requests (see
`codetrial.sandbox.remote`). Each attack is first shown to pass a naive runner where
it would (the tests in the candidate's process, without defences), then judged as
codetrial judges it, with what stopped it: the outcome, and the evidence found in the
verdict's detail or output.

The candidate's process holds neither the test machinery nor the channel to the
trusted side: what it patches, searches or walks there is its own. What it returns
crosses as plain data (a subclass of a built-in as the built-in's value) or stays its
object, which a comparison with plain data never asks. What it asks of the tests'
process beyond calls on what the current test handed it is refused and makes the run
`tampered`, as does a message the protocol does not allow; an exit or a limit stops
the run. An assertion helper of unittest that would hand the candidate's object the
tests' expected data (`assertSetEqual` asks `first.difference(expected)`) is refused
that request, so the comparison fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from codetrial.config import Limits
from codetrial.records import Outcome, TestOutcome, Verdict
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks.workspace import WorkspaceTask, load_exercise
from codetrial.verdict.workspace import expected_tests, judge_workspace
from tests.conftest import POLYGLOT

LIMITS = Limits(timeout_s=30, cpu_s=10, memory_mb=512, file_size_mb=4, scratch_mb=16)
# For the attacks that run into a limit: a second of CPU, three of wall.
SHORT = Limits(timeout_s=3, cpu_s=1, memory_mb=512, file_size_mb=4, scratch_mb=16)
FUNCTIONS = ("append", "concat", "filter", "length", "map", "foldl", "foldr", "reverse")
# What list-ops' stub, whose functions all return None, fails with apart.
STUB_FAILS = r"AssertionError: None != \[\][\s\S]*0 passed, 24 failed"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = open_sandbox(SandboxPolicy(LIMITS))
    yield box
    box.close()


@pytest.fixture(scope="module")
def list_ops() -> WorkspaceTask:
    return load_exercise(POLYGLOT / "exercises" / "list-ops", "polyglot-python")


@pytest.fixture(scope="module")
def react() -> WorkspaceTask:
    return load_exercise(POLYGLOT / "exercises" / "react", "polyglot-python")


def _solution(task: WorkspaceTask, attack: str, *, reference: bool = False) -> dict[str, str]:
    """The attack after the exercise's stub (or its reference solution)."""
    (path,) = task.editable
    return {path: dict(task.reference if reference else task.files)[path] + attack}


def _passes_naively(files: dict[str, str], task: WorkspaceTask, sandbox: Sandbox) -> None:
    """Under a runner without the defences, the attack passes every test."""
    verdict = judge_workspace(files, task, sandbox, LIMITS, guarded=False)
    assert verdict.outcome is Outcome.PASSED, verdict.visible_output
    assert len(verdict.tests) == len(expected_tests(task.test_sources))


def _caught(verdict: Verdict, outcome: Outcome, evidence: str) -> None:
    """The apart runner's verdict is `outcome`, with `evidence` (a pattern) in its
    detail or output; a run caught tampering gets no feedback, any other does."""
    shown = f"{verdict.detail}\n{verdict.visible_output}"
    assert verdict.outcome is outcome, shown
    assert re.search(evidence, shown), shown
    if outcome is Outcome.TAMPERED:
        assert verdict.feedback is None
    else:
        assert verdict.feedback is not None


UNITTEST_PATCHES = {
    "TestCase._getAssertEqualityFunc": """
import unittest

unittest.TestCase._getAssertEqualityFunc = lambda self, first, second: lambda *a, **k: None
""",
    "unittest.case._Outcome": """
import contextlib
import unittest.case


class _Outcome(unittest.case._Outcome):
    @contextlib.contextmanager
    def testPartExecutor(self, test_case, subTest=False):
        try:
            yield
        except Exception:
            pass


unittest.case._Outcome = _Outcome
""",
    "TestResult.addFailure": """
import unittest

unittest.TestResult.addFailure = unittest.TestResult.addError = lambda self, test, err: None
""",
    "unittest.util.safe_repr": """
import unittest.case
import unittest.util


def _stop(value, short=False):
    raise unittest.case._ShouldStop


unittest.util.safe_repr = unittest.case.safe_repr = _stop
""",
    "TestCase.failureException": """
import unittest
import unittest.case

unittest.TestCase.failureException = unittest.case._ShouldStop
""",
}


@pytest.mark.parametrize("patch", sorted(UNITTEST_PATCHES))
def test_patching_unittest_changes_nothing_apart(
    patch: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """Each patch makes unittest pass a failing test in the process that patched it.
    Apart, that process is the candidate's, which runs no test: the stub fails as it
    does alone."""
    files = _solution(list_ops, UNITTEST_PATCHES[patch])
    _passes_naively(files, list_ops, sandbox)
    _caught(judge_workspace(files, list_ops, sandbox, LIMITS), Outcome.FAILED, STUB_FAILS)


CHANNEL_PATCHES = {
    "json.dumps": """
import json

_dumps = json.dumps


def _passing(value, *args, **kwargs):
    if isinstance(value, dict) and value.get("outcome") in ("failed", "error"):
        value = {k: v for k, v in value.items() if k not in ("trace", "exception")}
        value["outcome"] = "passed"
    return _dumps(value, *args, **kwargs)


json.dumps = _passing
""",
    "json.JSONEncoder.encode": """
import json

_encode = json.JSONEncoder.encode


def _passing(self, value):
    if isinstance(value, dict) and value.get("outcome") in ("failed", "error"):
        value = dict(value, outcome="passed")
    return _encode(self, value)


json.JSONEncoder.encode = _passing
""",
    "os.write": """
import os

_write = os.write


def _passing(fd, data):
    if isinstance(data, bytes):
        for failing in (b'"failed"', b'"error"'):
            data = data.replace(b'"outcome": ' + failing, b'"outcome": "passed"')
    return _write(fd, data)


os.write = _passing
""",
}


@pytest.mark.parametrize("patch", sorted(CHANNEL_PATCHES))
def test_patching_what_a_channel_sends_through_changes_nothing_apart(
    patch: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """A channel that sends through the `json` and `os` of the moment sends what the
    patch makes of each record. Apart, the candidate's process has no channel to the
    trusted side; what it patches there carries its own replies, which still say
    None."""
    files = _solution(list_ops, CHANNEL_PATCHES[patch])
    _passes_naively(files, list_ops, sandbox)
    _caught(judge_workspace(files, list_ops, sandbox, LIMITS), Outcome.FAILED, STUB_FAILS)


EVERY_FUNCTION_RETURNS = f"""

for _name in {FUNCTIONS!r}:
    globals()[_name] = lambda *args, **kwargs: RESULT
"""

RESULTS = {
    "equal to everything": (
        """
class _Equal:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False
"""
        + EVERY_FUNCTION_RETURNS.replace("RESULT", "_Equal()"),
        r"AssertionError: <list_ops\._Equal object at 0x[0-9a-f]+> != \[\][\s\S]*0 passed, 24",
    ),
    "posing as a list": (
        """
class _Posing:
    __class__ = property(lambda self: list)

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False
"""
        + EVERY_FUNCTION_RETURNS.replace("RESULT", "_Posing()"),
        r"AssertionError: <list_ops\._Posing object at 0x[0-9a-f]+> != \[\][\s\S]*0 passed, 24",
    ),
}


@pytest.mark.parametrize("result", sorted(RESULTS))
def test_objects_equal_to_everything_are_never_asked_apart(
    result: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """An object whose __eq__ says yes to anything, even one whose __class__ says it
    is a list, passes every comparison in its own process. Apart, it is not plain
    data: it stays in the candidate's process, and a comparison between it and plain
    data never asks it. The failure shows its repr, asked of the candidate."""
    code, evidence = RESULTS[result]
    files = _solution(list_ops, code)
    _passes_naively(files, list_ops, sandbox)
    _caught(judge_workspace(files, list_ops, sandbox, LIMITS), Outcome.FAILED, evidence)


SUBCLASSES = {
    "a list equal to everything": (
        """
class _Agreeing(list):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False
"""
        + EVERY_FUNCTION_RETURNS.replace("RESULT", "_Agreeing()"),
        r"AssertionError: Lists differ: \[\] != \[1, 2, 3, 4\][\s\S]*5 passed, 19 failed",
    ),
    "an int equal to everything": (
        """
class _Agreeing(int):
    __hash__ = int.__hash__

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False
"""
        + EVERY_FUNCTION_RETURNS.replace("RESULT", "_Agreeing(0)"),
        r"AssertionError: 0 != \[\][\s\S]*1 passed, 23 failed",
    ),
    "a list and an int showing other values": (
        """
class _Showing(list):
    \"\"\"Empty as a list; its own methods show the items it was made with.\"\"\"

    def __init__(self, items):
        super().__init__()
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]

    def __eq__(self, other):
        return self.items == other

    def __ne__(self, other):
        return self.items != other


def append(list1, list2):
    return _Showing([*list1, *list2])


def concat(lists):
    return _Showing([item for one in lists for item in one])


def filter(function, list):
    return _Showing([item for item in list if function(item)])


def map(function, list):
    return _Showing([function(item) for item in list])


def reverse(list):
    return _Showing(list[::-1])


class _Counted(int):
    \"\"\"Zero as an int; its own methods show the count it was made with.\"\"\"

    def __new__(cls, count):
        made = super().__new__(cls, 0)
        made.count = count
        return made

    __hash__ = int.__hash__

    def __int__(self):
        return self.count

    def __eq__(self, other):
        return self.count == other

    def __ne__(self, other):
        return self.count != other


def length(list):
    return _Counted(len(list))


def foldl(function, list, initial):
    for item in list:
        initial = function(initial, item)
    return initial


def foldr(function, list, initial):
    for item in list[::-1]:
        initial = function(initial, item)
    return initial
""",
        r"Lists differ: \[\] != \[1, 2, 3, 4\][\s\S]*AssertionError: 0 != 4[\s\S]*13 passed, 11",
    ),
}


@pytest.mark.parametrize("subclass", sorted(SUBCLASSES))
def test_a_subclass_of_a_built_in_crosses_as_its_value_apart(
    subclass: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """Instances of subclasses of list and int whose own __eq__, __iter__, __len__ or
    __getitem__ say what the tests expect pass in their own process. Apart, each
    crosses as the built-in value, read with the built-in's own methods: an empty
    list, a zero. The tests whose expected value that is pass; the others fail."""
    code, evidence = SUBCLASSES[subclass]
    files = _solution(list_ops, code)
    _passes_naively(files, list_ops, sandbox)
    _caught(judge_workspace(files, list_ops, sandbox, LIMITS), Outcome.FAILED, evidence)


FORGES_ALL_PASSED = """

def _forge_every_test(send):
    cases = sys.modules["list_ops_test"].ListOpsTest
    names = unittest.TestLoader().getTestCaseNames(cases)
    for name in names:
        send({"test": "list_ops_test.py::ListOpsTest::" + name, "outcome": "passed"})
    send({"end": len(names)})
    os._exit(0)
"""

MEMORY_SEARCHES = {
    "the runner's send function": """
import gc
import os
import re
import sys
import types
import unittest


def _senders():
    \"\"\"Functions named send whose closure holds a nonce.\"\"\"
    found = []
    for value in gc.get_objects():
        if type(value) is not types.FunctionType or value.__name__ != "send":
            continue
        held = []
        for cell in value.__closure__ or ():
            try:
                held.append(cell.cell_contents)
            except ValueError:
                pass
        if any(type(v) is str and re.fullmatch("[0-9a-f]{32}", v) for v in held):
            found.append(value)
    return found


def _searched(*args, **kwargs):
    senders = _senders()
    if senders:
        _forge_every_test(senders[0])
    return "found no channel"
"""
    + FORGES_ALL_PASSED,
    "the run's nonce": """
import gc
import json
import os
import sys
import unittest


def _searched(*args, **kwargs):
    nonces = [
        value["nonce"]
        for value in gc.get_objects()
        if type(value) is dict and type(value.get("nonce")) is str
    ]
    if nonces:

        def send(record):
            os.write(11, (json.dumps({"nonce": nonces[0], **record}) + "\\n").encode())

        _forge_every_test(send)
    return "found no channel"
"""
    + FORGES_ALL_PASSED,
}


@pytest.mark.parametrize("search", sorted(MEMORY_SEARCHES))
def test_searching_memory_for_the_channel_finds_nothing_apart(
    search: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """Among the objects of the process the tests run in are the runner's sender and
    the run's nonce: with either, the attack sends a passing record for every test
    and an end record, then exits. Apart, the candidate's process never held them;
    each function returns what the search found."""
    files = _solution(
        list_ops, MEMORY_SEARCHES[search] + EVERY_FUNCTION_RETURNS.replace("RESULT", "_searched()")
    )
    _passes_naively(files, list_ops, sandbox)
    verdict = judge_workspace(files, list_ops, sandbox, LIMITS)
    _caught(verdict, Outcome.FAILED, r"AssertionError: 'found no channel' != \[\]")
    assert not any(t.outcome is TestOutcome.PASSED for t in verdict.tests)


PEEKS_AT_THE_TEST = """
import ast
import linecache
import sys
import unittest


def _traced():
    \"\"\"This frame, as a traceback gives it.\"\"\"
    try:
        raise LookupError
    except LookupError as exc:
        return exc.__traceback__.tb_frame


def _peeked(*args, **kwargs):
    \"\"\"The value the calling test compares the result with, read from its source.\"\"\"
    frame = FRAME
    while frame is not None and not isinstance(frame.f_locals.get("self"), unittest.TestCase):
        frame = frame.f_back
    if frame is None:
        return "found no frame of a test"
    code = frame.f_code
    tree = ast.parse("".join(linecache.getlines(code.co_filename)))
    method = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.lineno == code.co_firstlineno
    )
    check = next(
        node
        for node in ast.walk(method)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "assertEqual"
    )
    return ast.literal_eval(check.args[1])
"""


@pytest.mark.parametrize("frame", ["sys._getframe()", "_traced()"])
def test_walking_frames_finds_no_test_apart(
    frame: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """Walking up from its own frame, the attack finds the test that called it, and
    reads from the test's source the value it expects. Apart, the frames above the
    candidate's function are its own process's: no test is among them."""
    peek = PEEKS_AT_THE_TEST.replace("FRAME", frame)
    files = _solution(list_ops, peek + EVERY_FUNCTION_RETURNS.replace("RESULT", "_peeked()"))
    _passes_naively(files, list_ops, sandbox)
    verdict = judge_workspace(files, list_ops, sandbox, LIMITS)
    _caught(verdict, Outcome.FAILED, r"AssertionError: 'found no frame of a test' != \[\]")
    assert not any(t.outcome is TestOutcome.PASSED for t in verdict.tests)


KEEPS_CALLBACKS = """

_KEPT = []
_made = InputCell.__init__
_add = ComputeCell.add_callback


def _calling_the_kept(self, initial_value):
    while _KEPT:
        _KEPT.pop()(0)
    _made(self, initial_value)


def _keeping(self, callback):
    _KEPT.append(callback)
    _add(self, callback)


InputCell.__init__ = _calling_the_kept
ComputeCell.add_callback = _keeping
"""


def test_a_callback_kept_for_a_later_test_is_dead_apart(
    react: WorkspaceTask, sandbox: Sandbox
) -> None:
    """The reference solution, keeping every callback it is given and calling those
    kept at the next test's first cell. In one process that is harmless. Apart, what
    a test handed the candidate is served only during that test: the call raises
    ReferenceError in the candidate, and the test it was made in errors."""
    reference = judge_workspace(dict(react.reference), react, sandbox, LIMITS)
    assert reference.outcome is Outcome.PASSED, reference.visible_output
    files = _solution(react, KEEPS_CALLBACKS, reference=True)
    _passes_naively(files, react, sandbox)
    verdict = judge_workspace(files, react, sandbox, LIMITS)
    _caught(
        verdict, Outcome.ERROR, "ReferenceError: a callback handed out by an earlier test is called"
    )


REACHES_THROUGH_A_CALLBACK = """

def _reaching(self, callback):
    end = object.__getattribute__(callback, "_ct_end")
    try:
        REACH
    except PermissionError:
        pass


ComputeCell.add_callback = _reaching
"""

REACHES = {
    "its attributes": (
        'end.request("getattr", (callback, "__globals__"))',
        "asked the tests' process to do 'getattr'",
    ),
    "a class's subclasses": (
        'end.request("method", (object, "__subclasses__"))',
        "asked the tests' process to do 'method' to what it never handed out",
    ),
    "a method that is not public": (
        'end.request("method", (callback, "__setstate__", (print, (), {}, {})))',
        r"called a method of a test's object that is not public: \['__setstate__'\]",
    ),
    "an import": (
        'end.request("import", ("unittest",))',
        "asked the tests' process to do 'import'",
    ),
}


@pytest.mark.parametrize("reach", sorted(REACHES))
def test_reaching_the_tests_through_a_callback_is_tampered(
    reach: str, react: WorkspaceTask, sandbox: Sandbox
) -> None:
    """Given a callback, the candidate asks the tests' process, on the protocol's
    own endpoint, for more than a call on it: an attribute, a method of what it was
    never handed, a method that is not public, an import. Each is refused (the
    candidate gets PermissionError, and swallows it) and kept as evidence."""
    code, evidence = REACHES[reach]
    files = _solution(react, REACHES_THROUGH_A_CALLBACK.replace("REACH", code))
    verdict = judge_workspace(files, react, sandbox, LIMITS)
    _caught(verdict, Outcome.TAMPERED, rf"the candidate's process {evidence}")


WALKS_FROM_A_CALLBACK = """

def _walking(self, callback):
    raise LookupError(WALK)


ComputeCell.add_callback = _walking
"""

WALKS = {
    "__class__.__subclasses__": (
        'f"{type(callback).__name__} has {len(callback.__class__.__subclasses__())} subclasses"',
        "LookupError: Peer has 0 subclasses",
    ),
    "__globals__": (
        "f\"reached the globals of {callback.func.__globals__['__name__']}\"",
        "LookupError: reached the globals of remote",
    ),
}


@pytest.mark.parametrize("walk", sorted(WALKS))
def test_walking_from_a_callback_stays_in_the_candidate_s_process(
    walk: str, react: WorkspaceTask, sandbox: Sandbox
) -> None:
    """In one process, a callback's class and globals lead to the tests. Apart, what
    the candidate holds is its own stand-in for the callback: its class is that
    stand-in's, and an attribute of it a function of the protocol's module. Nothing
    is asked of the tests' process, so nothing is refused: the stub fails, and the
    failures say where the walk led."""
    code, evidence = WALKS[walk]
    files = _solution(react, WALKS_FROM_A_CALLBACK.replace("WALK", code))
    verdict = judge_workspace(files, react, sandbox, LIMITS)
    _caught(verdict, Outcome.FAILED, evidence)


PROTOCOL_WRITES = {
    "garbage at import": (
        'import os\nos.write(11, b"garbage\\n")\n',
        Outcome.TAMPERED,
        "the candidate's process broke the protocol: a message that is not JSON",
    ),
    "a record at import": (
        'import os\nos.write(11, b\'{"nonce": "0", "end": 24}\\n\')\n',
        Outcome.TAMPERED,
        "the candidate's process broke the protocol: "
        "a message that is neither a request nor a reply",
    ),
    "a reply at import": (
        "import os\nos.write(11, b'{\"ok\": true}\\n')\n",
        Outcome.ERROR,
        r"ImportError: cannot import name 'append' from 'list_ops' \(list_ops.py\)",
    ),
    "a reply in a call": (
        "\nimport os\n\n\ndef append(list1, list2):\n"
        "    os.write(11, b'{\"ok\": [1, 2, 3, 4]}\\n')\n",
        Outcome.FAILED,
        r"concat\(\[\]\), \[\]\)\nAssertionError: Lists differ: \[1, 2, 3, 4\] != \[\]"
        r"[\s\S]*2 passed, 22 failed",
    ),
    "a request at import": (
        'import os\nos.write(11, b\'{"do": "call", "args": [{"$own": 1}], "kwargs": {}}\\n\')\n',
        Outcome.ERROR,
        r"crash: the candidate's process ended \(code 0\)",
    ),
}


@pytest.mark.parametrize("write", sorted(PROTOCOL_WRITES))
def test_writing_on_the_protocol_s_descriptor(
    write: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """The candidate's process writes to the tests' process on its descriptor 11
    itself. Garbage, or a record meant for the trusted side, breaks the protocol. A
    reply nobody asked for is taken for the reply to the request waiting: at import,
    `True` for the module, which has no functions then; in a call, a list for
    append's result, and every reply after it answers the request before. A request
    for an object never handed out is answered with ReferenceError, which the
    candidate's end, not having asked, takes for a broken protocol and stops on."""
    code, outcome, evidence = PROTOCOL_WRITES[write]
    verdict = judge_workspace(_solution(list_ops, code), list_ops, sandbox, LIMITS)
    _caught(verdict, outcome, evidence)


EXITS = {
    "os._exit at import": (
        "import os\nos._exit(0)\n",
        False,
        Outcome.ERROR,
        r"crash: the candidate's process ended \(code 0\)",
    ),
    "SIGKILL in a call": (
        "\nimport os\nimport signal\n\n\ndef reverse(list):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n",
        True,
        Outcome.ERROR,
        r"crash: the candidate's process ended \(signal 9\)",
    ),
    "sys.exit in a call": (
        "\nimport sys\n\n\ndef reverse(list):\n    sys.exit(0)\n",
        True,
        Outcome.ERROR,
        r"candidate\.SystemExit: 0",
    ),
    "a loop at import": (
        "while True:\n    pass\n",
        False,
        Outcome.TIMEOUT,
        r"timeout: over 1 s of CPU",
    ),
    "a sleep at import": (
        "import time\ntime.sleep(3600)\n",
        False,
        Outcome.TIMEOUT,
        r"timeout: no answer within 3 s wall",
    ),
}


@pytest.mark.parametrize("exit", sorted(EXITS))
def test_an_exit_or_a_limit_stops_the_run(
    exit: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """The candidate's process ends, or never answers: at import, or in `reverse`
    after the reference solution has passed the tests that come before it. A stop is
    never a pass, however many tests passed before it; a SystemExit is only an
    exception the candidate raised, which the tests see."""
    code, on_reference, outcome, evidence = EXITS[exit]
    files = _solution(list_ops, code, reference=on_reference)
    verdict = judge_workspace(files, list_ops, sandbox, SHORT)
    _caught(verdict, outcome, evidence)
    if on_reference:
        assert sum(t.outcome is TestOutcome.PASSED for t in verdict.tests) == 20


RAISES = """

def _raising(*args, **kwargs):
    RAISE
"""

EXCEPTIONS = {
    "FileNotFoundError": (
        'raise FileNotFoundError(2, "No such file", "list.txt")',
        Outcome.ERROR,
        r"FileNotFoundError: \[Errno 2\] No such file: 'list.txt'",
    ),
    "TimeoutError": ('raise TimeoutError("too slow")', Outcome.ERROR, "TimeoutError: too slow"),
    "ExceptionGroup": (
        'raise ExceptionGroup("several", [ValueError("one"), KeyError("two")])',
        Outcome.ERROR,
        r"ExceptionGroup: several \(2 sub-exceptions\)[\s\S]*ValueError: one",
    ),
    "MemoryError": ("return bytearray(10**10)", Outcome.MEMORY, "MemoryError"),
}


@pytest.mark.parametrize("exception", sorted(EXCEPTIONS))
def test_an_exception_the_candidate_raises_crosses_whatever_its_class_makes_it_with(
    exception: str, list_ops: WorkspaceTask, sandbox: Sandbox
) -> None:
    """OSError's family, MemoryError and exception groups are made by constructors of
    their own: each crosses as an exception of its class, with its arguments, and the
    tests see it raised. None is taken for a broken protocol, which would make the
    run of an honest candidate `tampered`."""
    code, outcome, evidence = EXCEPTIONS[exception]
    raising = RAISES.replace("RAISE", code) + EVERY_FUNCTION_RETURNS.replace("RESULT", "_raising()")
    verdict = judge_workspace(_solution(list_ops, raising), list_ops, sandbox, LIMITS)
    _caught(verdict, outcome, evidence)
    assert "protocol" not in verdict.detail


ECHOES_THE_EXPECTED_SET = """
BLACK = WHITE = NONE = ""


class _Echo:
    \"\"\"Whatever set it is asked to differ from, it holds the same items.\"\"\"

    def __init__(self):
        self.items = set()

    def difference(self, other):
        self.items = set(other)
        return set()

    def __iter__(self):
        return iter(self.items)


class Board:
    def __init__(self, board):
        self.width, self.height = len(board[0]), len(board)

    def territory(self, x, y):
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise ValueError("Invalid coordinate")
        return NONE, _Echo()

    def territories(self):
        return {NONE: _Echo()}
"""


def test_a_set_comparison_does_not_ask_the_candidate_s_object(sandbox: Sandbox) -> None:
    """go-counting compares each territory with `assertSetEqual`, which uses the
    first argument's own `difference` with the expected set, then iterates it. A
    candidate's object that keeps the set it is handed and iterates over it passes
    every such comparison; the stones pass too, the candidate defining the colours
    they are compared with all alike (a weakness of the tests, in any runner). Apart,
    unittest's assertions never hand a candidate's object the tests' data: the
    territory's `difference` is refused there, and the comparison fails."""
    task = load_exercise(POLYGLOT / "exercises" / "go-counting", "polyglot-python")
    files = {"go_counting.py": ECHOES_THE_EXPECTED_SET}
    _passes_naively(files, task, sandbox)
    verdict = judge_workspace(files, task, sandbox, LIMITS)
    assert verdict.outcome is Outcome.FAILED, verdict.visible_output
    assert "the assertion would hand it the tests' data" in verdict.visible_output
