"""The built-in suite has teeth: references pass, wrong variants are rejected."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codetrial.records import Outcome, Visibility
from codetrial.tasks import Task, known_suites
from tests.conftest import FIXTURES

TASK_IDS = [
    "balanced_brackets",
    "longest_common_prefix",
    "merge_intervals",
    "moving_average",
    "palindrome",
    "rotate_matrix",
    "run_length_encoding",
    "shortest_path_grid",
    "top_k_frequent",
    "two_sum",
]
WRONG = sorted((FIXTURES / "wrong").glob("*/*.py"))


def _assertions(source: str) -> int:
    tree = ast.parse(source)
    asserts = sum(isinstance(n, ast.Assert) for n in ast.walk(tree))
    raises = sum(
        isinstance(n, ast.With)
        and any("raises" in ast.unparse(item.context_expr) for item in n.items)
        for n in ast.walk(tree)
    )
    return asserts + raises


def test_suite_is_the_seed_ten(contracts10: dict[str, Task]) -> None:
    assert "contracts10" in known_suites()
    assert sorted(contracts10) == TASK_IDS


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_shape(contracts10: dict[str, Task], task_id: str) -> None:
    task = contracts10[task_id]
    assert task.reference is not None
    assert task.tests_of(Visibility.VISIBLE) and task.tests_of(Visibility.HIDDEN)
    assert f"def {task.entry_point}(" in task.spec
    # The seed's tasks had 4 to 8 assertions; the mutation audit added a few where
    # meaningful mutants of the reference survived them.
    assert 4 <= sum(_assertions(t.source) for t in task.tests) <= 12
    assert len(list((FIXTURES / "wrong" / task_id).glob("*.py"))) >= 2


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_passes(contracts10: dict[str, Task], judge_code, task_id: str) -> None:  # type: ignore[no-untyped-def]
    task = contracts10[task_id]
    assert task.reference is not None
    verdict = judge_code(task.reference, task)
    assert verdict.outcome is Outcome.PASSED, verdict.visible_output + verdict.hidden_output
    assert {t.visibility for t in verdict.tests} == {Visibility.VISIBLE, Visibility.HIDDEN}


@pytest.mark.parametrize("path", WRONG, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_wrong_variant_is_rejected(contracts10: dict[str, Task], judge_code, path: Path) -> None:  # type: ignore[no-untyped-def]
    verdict = judge_code(path.read_text(), contracts10[path.parent.name])
    assert verdict.outcome is not Outcome.PASSED
    if path.stem.startswith("passes_visible"):
        visible = [t for t in verdict.tests if t.visibility is Visibility.VISIBLE]
        assert visible and all(t.outcome == "passed" for t in visible)


def test_seed_mutating_merge_fails_on_mutation(contracts10: dict[str, Task], judge_code) -> None:  # type: ignore[no-untyped-def]
    code = (FIXTURES / "wrong" / "merge_intervals" / "mutates_input.py").read_text()
    verdict = judge_code(code, contracts10["merge_intervals"])
    assert verdict.outcome is Outcome.FAILED
    failed = [t for t in verdict.tests if t.outcome == "failed"]
    assert [t.name for t in failed] == [
        "test_does_not_mutate_input",
        "test_returns_new_inner_lists",
    ]
    assert all(t.exception_type == "AssertionError" for t in failed)
