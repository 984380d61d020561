"""Every outcome of the closed enum, reached by a real candidate on a real task."""

from __future__ import annotations

from codetrial.config import Limits
from codetrial.gate import get_profile
from codetrial.records import Candidate, Outcome, TestResult, Visibility
from codetrial.sandbox import SandboxPolicy, Stop, open_sandbox
from codetrial.tasks import Task, load_folder
from codetrial.verdict import classify
from codetrial.verdict.pool import JudgePool
from codetrial.verdict.pytest_harness import run_plain_tests, run_pytest_main
from tests.conftest import FAST_LIMITS, write_task

CASES = {
    Outcome.PASSED: "def add(a, b):\n    return a + b\n",
    Outcome.FAILED: "def add(a, b):\n    return a - b\n",
    Outcome.ERROR: "def add(a, b):\n    raise ValueError('no')\n",
    Outcome.TIMEOUT: "def add(a, b):\n    while True:\n        pass\n",
    Outcome.MEMORY: "def add(a, b):\n    return len('x' * (10 ** 11))\n",
    Outcome.SYNTAX_ERROR: "def add(a, b)\n    return a + b\n",
    Outcome.REJECTED: "import os\ndef add(a, b):\n    return a + b\n",
}


def test_each_outcome(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    for expected, code in CASES.items():
        assert judge_code(code, add_task).outcome is expected, code


def test_output_limit(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    code = "def add(a, b):\n    return 'y' * (40 * 1024 * 1024)\n"
    assert judge_code(code, add_task).outcome is Outcome.OUTPUT_LIMIT


def test_no_code(add_task: Task, sandbox) -> None:  # type: ignore[no-untyped-def]
    from codetrial.gate import get_profile
    from codetrial.records import Candidate
    from codetrial.verdict import judge

    verdict = judge(Candidate("no idea", None), add_task, get_profile("off"), sandbox, Limits())
    assert verdict.outcome is Outcome.NO_CODE
    assert verdict.feedback


def test_exiting_early_is_not_a_pass(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    code = "import os\nos._exit(0)\ndef add(a, b):\n    return 0\n"
    assert judge_code(code, add_task, profile="off").outcome is Outcome.ERROR
    code = "import sys\nsys.exit(0)\ndef add(a, b):\n    return 0\n"
    assert judge_code(code, add_task, profile="off").outcome is not Outcome.PASSED


def test_hidden_failure_gives_no_feedback(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    verdict = judge_code("def add(a, b):\n    return 3\n", add_task)
    assert verdict.outcome is Outcome.FAILED
    assert verdict.feedback is None
    assert [t.visibility for t in verdict.tests if t.outcome == "failed"] == [Visibility.HIDDEN]


def test_visible_feedback_never_shows_hidden_tests(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    verdict = judge_code("def add(a, b):\n    return 0\n", add_task)
    assert verdict.feedback is not None
    assert "test_adds" in verdict.feedback
    assert "test_negatives" not in verdict.feedback and "-3" not in verdict.feedback


def test_signature_mismatch_is_rejected_before_running(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    verdict = judge_code("def add(pair):\n    return sum(pair)\n", add_task)
    assert verdict.outcome is Outcome.REJECTED
    assert verdict.gate is not None and verdict.gate.rule_id == "G009"
    assert verdict.tests == ()


def test_classify_uses_only_stops_and_structured_results() -> None:
    passed = [TestResult(name="t", visibility=Visibility.VISIBLE, outcome="passed")]
    failed = [
        TestResult(
            name="t",
            visibility=Visibility.VISIBLE,
            outcome="failed",
            exception_type="AssertionError",
        )
    ]
    assert classify(None, passed, complete=True) is Outcome.PASSED
    assert classify(None, passed, complete=False) is Outcome.ERROR
    assert classify(None, [], complete=True) is Outcome.ERROR
    assert classify(None, failed, complete=True) is Outcome.FAILED
    assert classify(Stop.TIMEOUT, passed, complete=True) is Outcome.TIMEOUT
    assert classify(Stop.CRASH, passed, complete=True) is Outcome.ERROR
    assert classify(Stop.MEMORY, [], complete=False) is Outcome.MEMORY


def test_plain_runner_records_what_pytest_records(contracts10, sandbox) -> None:  # type: ignore[no-untyped-def]
    """The direct runner for plain test files and a full pytest session agree, test by
    test, on correct, wrong, raising and missing candidates."""
    for task in contracts10.values():
        variants = (
            task.reference or "",
            f"def {task.entry_point}(*args, **kwargs):\n    return None\n",
            f"def {task.entry_point}(*args, **kwargs):\n    raise KeyError('k')\n",
            "x = 1\n",
        )
        for visibility in Visibility:
            tests = task.tests_of(visibility)
            for code in variants:
                runs = []
                for runner in (run_plain_tests, run_pytest_main):
                    with sandbox.session(task.program(code), FAST_LIMITS) as session:
                        recorder, _ = runner(tests, visibility, session)
                    runs.append((recorder.results, recorder.complete))
                plain, full = runs
                assert [(t.name, t.outcome, t.exception_type) for t in plain[0]] == [
                    (t.name, t.outcome, t.exception_type) for t in full[0]
                ], (task.id, visibility, code)
                assert plain[1] == full[1]


def test_plain_failure_explains_the_assertion(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    verdict = judge_code("def add(a, b):\n    return a * b\n", add_task)
    assert verdict.feedback is not None
    assert "assert 2 == 3" in verdict.feedback and "where 2 = add(1, 2)" in verdict.feedback
    assert "test_visible.py::test_adds" in verdict.feedback


def test_files_that_need_pytest_still_run(tmp_path, judge_code) -> None:  # type: ignore[no-untyped-def]
    visible = (
        "import pytest\nfrom candidate import add\n\n\n"
        "@pytest.fixture\ndef two():\n    return 2\n\n\n"
        "@pytest.mark.parametrize('a', [1, 5])\n"
        "def test_adds(a, two):\n    assert add(a, two) == a + 2\n"
    )
    task = load_folder(write_task(tmp_path / "add", "def add(a: int, b: int) -> int:", visible))
    assert judge_code("def add(a, b):\n    return a + b\n", task).outcome is Outcome.PASSED
    failed = judge_code("def add(a, b):\n    return 3 if a == 1 else 0\n", task)
    assert failed.outcome is Outcome.FAILED
    assert [(t.name, t.outcome) for t in failed.tests] == [
        ("test_adds[1]", "passed"),
        ("test_adds[5]", "failed"),
    ]


def test_a_program_is_judged_once_per_task(add_task: Task) -> None:
    """A program that passes or fails by chance: repeated, it keeps its first verdict;
    the same behaviour in forty different texts draws forty verdicts."""
    coin = "import random\n\ndef add(a, b):\n    return a + b if random.random() < 0.5 else 0\n"
    pool = JudgePool(2, SandboxPolicy(FAST_LIMITS))
    try:
        profile = get_profile("off")
        repeated = [pool.submit(Candidate(coin, coin), add_task, profile) for _ in range(20)]
        texts = [f"{coin}# copy {i}\n" for i in range(40)]
        distinct = [pool.submit(Candidate(t, t), add_task, profile) for t in texts]
        assert len({id(f) for f in repeated}) == 20
        assert len({f.result().outcome for f in repeated}) == 1
        assert {f.result().outcome for f in distinct} == {Outcome.PASSED, Outcome.FAILED}
    finally:
        pool.close()


def test_strings_hash_alike_in_every_sandbox_so_set_order_never_moves_a_verdict() -> None:
    order = "def order():\n    return ''.join({'alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta'})\n"
    seen = set()
    for unsafe in (False, False, True):
        fresh = open_sandbox(SandboxPolicy(FAST_LIMITS, unsafe))
        try:
            with fresh.session(order) as session:
                seen.add(session.call("order", [], {}))
        finally:
            fresh.close()
    assert len(seen) == 1
