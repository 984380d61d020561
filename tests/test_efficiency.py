"""Efficiency against the reference: usage from the kernel's accounting of each test
run, heavy inputs scaled from the hardened ones, and passing candidates measured
beside the reference on both, slow ones flagged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import codetrial
from codetrial.harden.heavy import MAX_CHARS, MAX_SCALE, _grown, scaled
from codetrial.harden.suite import harden, write_suite
from codetrial.tasks import load_suite
from tests.conftest import write_task

QUADRATIC = """def is_palindrome(text: str) -> bool:
    cleaned = [ch.lower() for ch in text if ch.isalnum()]
    return sum(cleaned[i] == cleaned[::-1][i] for i in range(len(cleaned))) == len(cleaned)
"""
# Right on every small input, so it passes the hardened tests; wrong on long ones.
WRONG_WHEN_LONG = """def is_palindrome(text: str) -> bool:
    cleaned = [ch.lower() for ch in text if ch.isalnum()]
    return (cleaned == cleaned[::-1]) != (len(text) > 10000)
"""
# Right on every small input; out of memory on long ones.
HOARDS_WHEN_LONG = """def is_palindrome(text: str) -> bool:
    if len(text) > 10000:
        ballast = [0] * (1 << 40)
    cleaned = [ch.lower() for ch in text if ch.isalnum()]
    return cleaned == cleaned[::-1]
"""
HOG = """def two_sum(nums, target):
    ballast = [0] * 20_000_000
    seen = {}
    for j, value in enumerate(nums):
        if target - value in seen:
            return (seen[target - value], j)
        seen.setdefault(value, j)
    raise ValueError(len(ballast))
"""


@pytest.fixture(scope="module")
def palindrome_hard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    (task,) = load_suite("contracts10", ["palindrome"])
    hardened = harden([task], tests=20, budget=60, seed=0, workers=2)
    return write_suite(hardened, "contracts10", tmp_path_factory.mktemp("hard"), seed=0)


def test_a_test_run_records_the_cpu_time_and_peak_memory_of_its_process() -> None:
    (task,) = load_suite("contracts10", ["two_sum"])
    with codetrial.Judge() as judge:
        lean, hog = judge(task.reference or "", task), judge(HOG, task)
    assert lean.outcome.value == hog.outcome.value == "passed"
    assert lean.usage is not None and hog.usage is not None
    assert 0 < lean.usage.cpu_s < hog.usage.cpu_s
    assert hog.usage.peak_kb - lean.usage.peak_kb > 100_000  # the ballast: 160 MB


def test_scaling_repeats_strings_and_lists_and_multiplies_ints_only_without_them() -> None:
    assert scaled(("ab", [1, 2], 3, (4, 5), 1.5), 2) == ("abab", [1, 2, 1, 2], 3, (4, 5), 1.5)
    assert scaled((3, 1.5, True), 4) == (12, 1.5, True)


def test_strings_and_lists_grow_past_the_integer_cap_until_the_size_cap() -> None:
    assert _grown(("ab", 3), 2 * MAX_SCALE) == (
        ("ab" * 2 * MAX_SCALE, 3),
        repr(("ab" * 2 * MAX_SCALE, 3)),
    )
    assert _grown(([1], 3), 2 * MAX_SCALE) is not None
    assert _grown((3,), MAX_SCALE) is not None and _grown((3,), 2 * MAX_SCALE) is None
    assert _grown(("ab",), MAX_CHARS) is None


def test_a_hardened_task_gets_a_heavy_input_the_reference_handles(palindrome_hard: Path) -> None:
    (task,) = load_suite(str(palindrome_hard))
    assert len(task.heavy_input) > 10_000
    assert (palindrome_hard / "palindrome" / "heavy_input.txt").is_file()


def test_a_heavy_input_that_is_not_an_argument_tuple_is_reported_not_used(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "sums"
    test = "from candidate import total\n\n\ndef test_one():\n    assert total([1]) == 1\n"
    reference = "def total(values: list[int]) -> int:\n    return sum(values)\n"
    for name, heavy in (("unparsed", "([1, 2]"), ("untupled", "[1, 2]")):
        write_task(suite / name, "def total(values: list[int]) -> int:", test)
        (suite / name / "reference.py").write_text(reference)
        (suite / name / "heavy_input.txt").write_text(heavy)
    samples = [{"task_id": name, "solution": reference} for name in ("unparsed", "untupled")]
    run = codetrial.evaluate(samples, suite=str(suite), runs_dir=tmp_path / "runs")
    rows = {r["task_id"]: r["heavy"] for r in run.as_dict()["efficiency"]["references"]}
    assert rows["unparsed"]["unusable"] == "heavy_input is not a Python literal (SyntaxError)"
    assert rows["untupled"]["unusable"] == "heavy_input is not a tuple of the 1 arguments"
    assert all(c["heavy"] is None for c in run.as_dict()["efficiency"]["candidates"])


def test_passing_candidates_are_measured_against_the_reference_and_slow_ones_flagged(
    palindrome_hard: Path, tmp_path: Path
) -> None:
    (task,) = load_suite(str(palindrome_hard))
    codes = (task.reference, QUADRATIC, WRONG_WHEN_LONG, HOARDS_WHEN_LONG)
    samples = [{"task_id": "palindrome", "solution": code} for code in codes]
    run = codetrial.evaluate(samples, suite=str(palindrome_hard), runs_dir=tmp_path, workers=2)
    assert [row["passed"] for row in run.table()] == [True, True, True, True]
    document = json.loads((run.path / "results.json").read_text())["efficiency"]
    (reference,) = document["references"]
    assert reference["heavy"]["cpu_s"] > reference["heavy"]["base_cpu_s"]
    same, quadratic, wrong, hoarder = document["candidates"]
    assert 0.5 < same["heavy"]["cpu_ratio"] < 2 and not same["slow"]
    assert quadratic["heavy"]["over_cap"] and quadratic["heavy"]["cpu_ratio"] >= 10
    assert quadratic["slow"]
    assert wrong["heavy"]["agrees"] is False and wrong["heavy"]["cpu_ratio"] is None
    assert hoarder["heavy"]["unmeasured"] == "stopped by a limit or a fault"
    assert hoarder["heavy"]["agrees"] is None and not hoarder["slow"]
    (summary,) = document["summary"]
    assert (summary["candidates"], summary["slow"], summary["disagree"]) == (4, 1, 1)
    assert summary["unmeasured"] == 1
    assert summary["over_cap"] == 1 and summary["heavy_timed"] == 2
    html = (run.path / "report.html").read_text()
    assert "Efficiency against the reference" in html and "Flagged slow" in html


def test_efficiency_can_be_left_out(tmp_path: Path) -> None:
    (task,) = load_suite("contracts10", ["two_sum"])
    run = codetrial.evaluate(
        [{"task_id": "two_sum", "solution": task.reference}],
        suite="contracts10",
        runs_dir=tmp_path,
        efficiency=False,
    )
    assert not (run.path / "efficiency.json").exists()
    assert run.as_dict()["efficiency"] is None
    (attempt,) = run.attempts()
    assert attempt.usage is not None and attempt.usage.cpu_s > 0
