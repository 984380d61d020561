"""Selection strategies on pools with known answers, and generated tests run for real."""

from __future__ import annotations

import pytest

from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.select import PoolCandidate, TaskPool, select_pass_at_1
from codetrial.select.generated import extract_tests
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool

RIGHT = PoolCandidate(True, frozenset({"t1", "t2"}))
WRONG_ALONE = PoolCandidate(False, frozenset({"t1", "t3"}))
WRONG_NONE = PoolCandidate(False, frozenset())


def test_codet_prefers_the_largest_agreeing_group() -> None:
    pool = TaskPool("t", [WRONG_ALONE, RIGHT, RIGHT, WRONG_NONE], {"t1": 1, "t2": 1, "t3": 1})
    assert select_pass_at_1([pool], "codet") == [1.0]
    assert select_pass_at_1([pool], "first") == [0.0]
    assert select_pass_at_1([pool], "random") == [0.5]
    assert select_pass_at_1([pool], "oracle") == [1.0]


def test_codet_weights_tests_by_frequency_and_scores_ties_in_expectation() -> None:
    heavy = PoolCandidate(False, frozenset({"t3"}))
    pool = TaskPool("t", [heavy, RIGHT], {"t1": 1, "t2": 1, "t3": 2})
    assert select_pass_at_1([pool], "codet") == [0.5]
    pool = TaskPool("t", [heavy, RIGHT], {"t1": 1, "t2": 1, "t3": 3})
    assert select_pass_at_1([pool], "codet") == [0.0]


def test_codet_falls_back_to_random_when_nothing_passes() -> None:
    nothing = PoolCandidate(True, frozenset())
    pool = TaskPool("t", [nothing, WRONG_NONE, WRONG_NONE, WRONG_NONE])
    assert select_pass_at_1([pool], "codet") == [0.25]


def test_unknown_strategy_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="codet"):
        select_pass_at_1([], "telepathy")


def test_generated_tests_are_cut_like_codet() -> None:
    continuation = (
        "f(1) == 2\nassert f(2) == 3\nassert g(1) == 0\nassert \n    f(3) == 4\n"
        "assert f(4) == 5\n# done\nassert f(5) == 6\nassert f(6) == 7\nassert f(7) == 8\n"
        "assert f(8) == 9\n"
    )
    assert extract_tests(continuation, "f") == [
        "assert f(1) == 2", "assert f(2) == 3", "assert f(4) == 5", "assert f(5) == 6",
        "assert f(6) == 7",
    ]  # fmt: skip


def test_generated_tests_run_in_the_sandbox(add_task: Task) -> None:
    pool = JudgePool(1, Limits(timeout_s=3, cpu_s=1))
    code = (
        "def add(a, b):\n"
        "    if a == 7:\n"
        "        while True:\n"
        "            pass\n"
        "    if a == 9:\n"
        "        raise ValueError(a)\n"
        "    return a + b\n"
    )
    tests = ["assert add(1, 2) == 3", "assert add(7, 0) == 7", "assert add(2, 2) == 5",
             "assert add(9, 0) == 9", "assert add(0, 0) == 0"]  # fmt: skip
    try:
        passed = pool.submit_assertions(code, add_task, tests).result()
    finally:
        pool.close()
    assert passed == [True, False, False, False, True]
