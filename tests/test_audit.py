"""Mutation scores: mutants of a reference, judged against the task's visible and
hidden tests in the real sandbox."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

from codetrial.harden.audit import audit
from codetrial.harden.mutants import mutants, normalized
from codetrial.records import Visibility
from codetrial.tasks import Task, load_folder
from tests.conftest import cli, write_task

CLAMP = """def clamp(x: int, low: int, high: int) -> int:
    if x < low:
        return low
    if x > high:
        return high
    return x
"""


def test_each_mutant_is_one_distinct_change_that_parses() -> None:
    found = mutants(CLAMP)
    sources = [m.source for m in found]
    assert len(set(sources)) == len(sources) and normalized(CLAMP) not in sources
    assert [m.number for m in found] == list(range(1, len(found) + 1))
    for mutant in found:
        ast.parse(mutant.source)
        changed = [
            line
            for line in mutant.diff(CLAMP).splitlines()
            if line.startswith("+") and not line.startswith("+++")
        ]
        assert len(changed) == 1, mutant
    operators = {m.operator for m in found}
    assert {"comparison", "statement removed", "returns None"} <= operators
    assert "if x <= low:" in {line.strip() for m in found for line in m.source.splitlines()}


def _clamp_task(folder: Path, hidden: str) -> Task:
    write_task(
        folder,
        "def clamp(x: int, low: int, high: int) -> int:",
        "from candidate import clamp\n\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n",
        hidden,
    )
    return dataclasses.replace(load_folder(folder), reference=CLAMP)


def test_weak_tests_let_mutants_survive_and_stronger_ones_kill_them(tmp_path: Path) -> None:
    weak = _clamp_task(
        tmp_path / "weak",
        "from candidate import clamp\n\n\ndef test_below():\n    assert clamp(-5, 0, 10) == 0\n",
    )
    strong = _clamp_task(
        tmp_path / "strong",
        "from candidate import clamp\n\n\n"
        "def test_edges():\n    assert clamp(-5, 0, 10) == 0\n"
        "    assert clamp(15, 0, 10) == 10\n    assert clamp(0, 0, 10) == 0\n"
        "    assert clamp(10, 0, 10) == 10\n",
    )
    first, second = audit([weak, strong], workers=2)
    assert first.killed_by(Visibility.VISIBLE) is not None
    assert first.survivors and len(second.survivors) < len(first.survivors)
    survived = {m.source for m in first.survivors}
    assert any("return None" in s and "return high" not in s for s in survived)
    assert first.score is not None and second.score is not None and second.score > first.score


def test_a_reference_that_fails_its_own_tests_is_reported(tmp_path: Path) -> None:
    task = dataclasses.replace(
        _clamp_task(tmp_path / "t", ""), reference="def clamp(x, low, high):\n    return low\n"
    )
    (result,) = audit([task], workers=1)
    assert result.unsound == "the reference itself gets failed" and result.judged == []


def test_tasks_audit_on_contracts10(tmp_path: Path) -> None:
    result = cli("tasks", "--audit", "--task", "two_sum", "--task", "palindrome", "--json")
    assert result.returncode == 0, result.stderr
    scores = {a["task_id"]: a for a in json.loads(result.stdout)}
    assert scores["two_sum"]["mutants"] == 12 and scores["two_sum"]["killed"] == 12
    assert scores["palindrome"]["survivors"] == []
    table = cli("tasks", "--audit", "--task", "rotate_matrix")
    assert table.returncode == 0, table.stderr
    assert "mutant 8 (boundary -1, line 5) survives" in table.stdout
    assert (
        "+    return [[row[col] for row in reversed(matrix)] for col in range(len(matrix[-1]))]"
        in table.stdout
    )
