"""Hardened suites: inputs generated from a task's tests, expected outputs from its
reference in the sandbox, written as a new suite that catches what the original
tests let pass."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from codetrial.harden.inputs import mutation_inputs, property_inputs, seed_inputs, source_of
from codetrial.harden.suite import harden, hardenable, write_suite
from codetrial.tasks import Task, load_folder, load_suite
from tests.conftest import FIXTURES, cli, write_task

MBPP = FIXTURES / "benchmarks" / "mbpp.jsonl"
# Right on the tests below and on small numbers; wrong from 100 up.
SHORTCUT = "def total(values: list[int]) -> int:\n    return sum(v for v in values if v < 100)\n"
REFERENCE = """def total(values: list[int]) -> int:
    if any(v < 0 for v in values):
        raise ValueError("no negative values")
    return sum(values)
"""


def _task(folder: Path) -> Task:
    write_task(
        folder,
        "def total(values: list[int]) -> int:",
        "from candidate import total\n\n\ndef test_small():\n    assert total([1, 2, 3]) == 6\n"
        "    assert total([]) == 0\n",
        "from candidate import total\n\n\ndef test_more():\n    assert total([5, 7]) == 12\n",
    )
    (folder / "reference.py").write_text(REFERENCE)
    return load_folder(folder, suite="sums")


def test_seeds_come_from_the_literal_calls_the_tests_make(tmp_path: Path) -> None:
    task = _task(tmp_path / "total")
    assert seed_inputs(task) == [([1, 2, 3],), ([],), ([5, 7],)]
    (humaneval,) = load_suite("humaneval", ["HumanEval/0"])
    seeds = seed_inputs(humaneval)
    assert seeds and all(len(args) == 2 and isinstance(args[0], list) for args in seeds)


def test_generation_is_seeded_and_keeps_the_types(tmp_path: Path) -> None:
    task = _task(tmp_path / "total")
    seeds = seed_inputs(task)
    mutated = mutation_inputs(seeds, 30, seed=7)
    assert mutated == mutation_inputs(seeds, 30, seed=7) != mutation_inputs(seeds, 30, seed=8)
    assert all(
        isinstance(args[0], list) and all(isinstance(v, int) for v in args[0]) for args in mutated
    )
    drawn = property_inputs(task, seeds, 30, seed=7)
    assert drawn == property_inputs(task, seeds, 30, seed=7) and len(drawn) == 30
    assert all(isinstance(args[0], list) for args in drawn)


def test_a_hardened_suite_catches_what_the_original_tests_let_pass(tmp_path: Path) -> None:
    task = _task(tmp_path / "sums" / "total")
    (hardened,) = harden([task], tests=40, budget=120, seed=0, workers=1)
    assert hardened.dropped.get("raised", 0) > 0
    assert 0 < len(hardened.cases) <= 40
    assert all(min(args[0], default=0) >= 0 for args, _ in hardened.cases)
    assert all(want == sum(args[0]) for args, want in hardened.cases)
    root = write_suite([hardened], "sums", tmp_path / "out", seed=0)
    assert root == tmp_path / "out" / "sums-hard"
    assert (tmp_path / "sums" / "total" / "hidden" / "test_generated.py").exists() is False
    reference = cli("check", "--references", "--suite", root)
    assert reference.returncode == 0, reference.stdout
    shortcut = tmp_path / "shortcut.py"
    shortcut.write_text(SHORTCUT)
    original = cli("check", shortcut, "--task", "total", "--suite", tmp_path / "sums")
    assert original.returncode == 0, original.stdout
    caught = cli("check", shortcut, "--task", "total", "--suite", root)
    assert caught.returncode == 1 and "test_generated_inputs" in caught.stdout


def test_harden_humaneval_writes_an_evalplus_file_loaded_under_its_own_name(
    tmp_path: Path,
) -> None:
    result = cli(
        "harden",
        "humaneval",
        "--task",
        "HumanEval/0",
        "--task",
        "HumanEval/2",
        "--tests",
        "20",
        "--out",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    path = tmp_path / "humaneval-hard.jsonl"
    assert f"hardened suite: {path}" in " ".join(result.stdout.split())
    tasks = load_suite(str(path))
    assert [t.id for t in tasks] == ["HumanEval/0", "HumanEval/2"]
    assert {t.suite for t in tasks} == {"humaneval-hard"} and tasks[0].harness == "check"
    record = json.loads(path.read_text().splitlines()[0])
    assert record["test"].count("_GENERATED = [") == 1
    samples = tmp_path / "samples.jsonl"
    lines = [{"task_id": t.id, "solution": t.reference} for t in tasks]
    lines.append(
        {
            "task_id": "HumanEval/2",
            "solution": "def truncate_number(number):\n    return round(number % 1.0, 1)\n",
        }
    )
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    judged = cli("evaluate", samples, "--suite", path, "--runs-dir", tmp_path / "runs", "--json")
    assert judged.returncode == 0, judged.stderr
    document = json.loads(judged.stdout)
    assert [t["first_passed"] for t in document["tasks"]] == [True, True, False]
    assert tasks[0].heavy_input and not tasks[1].heavy_input  # a float does not scale
    heavy = {r["task_id"]: r["heavy"] for r in document["efficiency"]["references"]}
    assert heavy["HumanEval/0"]["cpu_s"] > heavy["HumanEval/0"]["base_cpu_s"]
    assert heavy["HumanEval/2"] is None
    timed = [c["heavy"] for c in document["efficiency"]["candidates"] if c["heavy"]]
    assert len(timed) == 1 and 0.5 < timed[0]["cpu_ratio"] < 2


def test_the_original_suite_is_unchanged(tmp_path: Path) -> None:
    before = {t.id: dataclasses.astuple(t) for t in load_suite("contracts10")}
    result = cli("harden", "contracts10", "--task", "two_sum", "--out", tmp_path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contracts10-hard"]  # nothing else
    assert {t.id: dataclasses.astuple(t) for t in load_suite("contracts10")} == before
    (task,) = load_suite(str(tmp_path / "contracts10-hard"))
    assert task.suite == "contracts10-hard"
    hidden = {t.name for t in task.tests if t.visibility.value == "hidden"}
    assert hidden == {"test_hidden.py", "test_generated.py"}


def test_sets_are_written_in_one_order_and_bare_containers_fall_back_to_the_seeds(
    tmp_path: Path,
) -> None:
    assert source_of({"pear", "apple", "fig"}) == "{'apple', 'fig', 'pear'}"
    assert source_of(({1},)) == "({1},)" and source_of(set()) == "set()"
    folder = tmp_path / "pairs"
    write_task(
        folder,
        "def pairs(rows: list[list]) -> int:",
        "from candidate import pairs\n\n\ndef test_one():\n    assert pairs([[1, 2]]) == 1\n",
    )
    task = load_folder(folder)
    drawn = property_inputs(task, seed_inputs(task), 10, seed=1)
    assert len(drawn) == 10 and all(isinstance(args[0], list) for args in drawn)


def test_mbpp_tasks_are_hardened_with_their_asserts_kept_and_cases_called_by_name(
    tmp_path: Path,
) -> None:
    result = cli("harden", "mbpp", "--data", MBPP, "--tests", "20", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    path = tmp_path / "mbpp-hard.jsonl"
    (task,) = load_suite(str(path))
    assert (task.id, task.suite, hardenable(task)) == ("mbpp/11", "mbpp-hard", "")
    assert 'assert remove_Occ("hello","l") == "heo"' in task.tests[0].source
    assert "def remove_Occ(s, ch):" in task.spec and task.spec.count("```") == 2
    shortcut = (
        'def remove_Occ(s, ch):\n    return {"hello": "heo", "abcda": "bcd", "PHP": "H"}[s]\n'
    )
    samples = tmp_path / "samples.jsonl"
    lines = [{"task_id": task.id, "solution": code} for code in (task.reference, shortcut)]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    original = cli(
        "evaluate",
        samples,
        "--suite",
        "mbpp",
        "--data",
        MBPP,
        "--runs-dir",
        tmp_path / "runs",
        "--json",
    )
    hardened = cli("evaluate", samples, "--suite", path, "--runs-dir", tmp_path / "runs", "--json")
    passed = [
        [t["first_passed"] for t in json.loads(r.stdout)["tasks"]] for r in (original, hardened)
    ]
    assert passed == [[True, True], [True, False]]
