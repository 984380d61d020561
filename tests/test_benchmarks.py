"""Benchmark task sources and the check harness: HumanEval from the shipped data,
EvalPlus and MBPP files the user points at, JSONL task files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codetrial.errors import TaskFormatError
from codetrial.records import Outcome
from codetrial.tasks import Task, load_suite
from tests.conftest import FIXTURES

BENCH = FIXTURES / "benchmarks"


def test_humaneval_comes_from_the_installed_package() -> None:
    tasks = load_suite("humaneval")
    assert len(tasks) == 164
    find_zero = next(t for t in tasks if t.id == "HumanEval/32")
    assert find_zero.entry_point == "find_zero" and find_zero.signature.n_params == 1
    assert "def poly(" in find_zero.context and find_zero.harness == "check"
    assert find_zero.policy == "off" and find_zero.prompt.startswith("import math")


@pytest.mark.parametrize(
    ("suite", "data", "count"),
    [("humaneval+", "HumanEvalPlus.jsonl", 2), ("mbpp+", "MbppPlus.jsonl", 1),
     ("mbpp", "mbpp.jsonl", 1)],
)  # fmt: skip
def test_reference_solutions_pass_their_own_harness(  # type: ignore[no-untyped-def]
    suite: str, data: str, count: int, judge_code
) -> None:
    tasks = load_suite(suite, data=BENCH / data)
    assert len(tasks) == count
    for task in tasks:
        assert task.reference is not None
        assert judge_code(task.reference, task, "off").outcome is Outcome.PASSED, task.id
        wrong = f"def {task.entry_point}(*args):\n    return None\n"
        assert judge_code(wrong, task, "off").outcome is not Outcome.PASSED


def test_prompt_helpers_are_available_to_candidate_and_test(judge_code) -> None:  # type: ignore[no-untyped-def]
    (_, mean) = load_suite("humaneval+", data=BENCH / "HumanEvalPlus.jsonl")
    uses_helper = "def mean(xs):\n    return sum(xs) / helper(xs)\n"
    assert judge_code(uses_helper, mean, "off").outcome is Outcome.PASSED


def test_a_failed_check_shows_its_own_line_and_what_the_candidate_raised(judge_code) -> None:  # type: ignore[no-untyped-def]
    task = load_suite("humaneval")[0]
    wrong = judge_code(task.prompt + "    return None\n", task, "off")
    assert wrong.outcome is Outcome.FAILED
    assert 'File "HumanEval/0/check.py", line 10, in check' in wrong.hidden_output
    assert "assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True" in wrong.hidden_output
    raising = judge_code(task.prompt + "    raise KeyError('broken')\n", task, "off")
    assert raising.outcome is Outcome.ERROR
    assert "raised in the candidate" in raising.hidden_output
    for verdict in (wrong, raising):
        assert "codetrial" not in verdict.hidden_output


def test_missing_data_file_names_what_is_expected(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match=r"--data PATH pointing at HumanEvalPlus\.jsonl"):
        load_suite("humaneval+")
    with pytest.raises(TaskFormatError, match="does not exist"):
        load_suite("mbpp+", data=tmp_path / "nope.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"task_id": "x", "entry_point": "f"}\n')
    with pytest.raises(TaskFormatError, match=r"broken\.jsonl:1: field 'prompt'"):
        load_suite("humaneval+", data=broken)


def test_jsonl_task_file(tmp_path: Path, judge_code, contracts10: dict[str, Task]) -> None:  # type: ignore[no-untyped-def]
    palindrome = contracts10["palindrome"]
    record = {
        "id": "palindrome",
        "spec": palindrome.spec,
        "tests": {t.name: t.source for t in palindrome.tests if t.visibility.value == "visible"},
        "hidden": {t.name: t.source for t in palindrome.tests if t.visibility.value == "hidden"},
        "reference": palindrome.reference,
    }
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (task,) = load_suite(str(path))
    assert task.tests == palindrome.tests
    assert judge_code(task.reference or "", task).outcome is Outcome.PASSED
    path.write_text(json.dumps({**record, "spec": "no signature"}) + "\n")
    with pytest.raises(TaskFormatError, match=r"mine\.jsonl:1: .*field 'signature'"):
        load_suite(str(path))
