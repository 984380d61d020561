"""Program tasks: contest problems judged on the trusted side, their folder format,
the built-in `programs` suite, and the candidate programs that try to pass without
solving them. Every program runs in a real sandbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli, fenced

import codetrial
from codetrial.config import Limits
from codetrial.errors import TaskFormatError
from codetrial.gate import get_profile
from codetrial.kinds import Asked
from codetrial.kinds.program import PROGRAM
from codetrial.models.scripted import ScriptedBackend
from codetrial.records import Outcome, Verdict
from codetrial.rerun import rejudge
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import ProgramTask, load_suite
from codetrial.tasks.programs import load_problem
from codetrial.verdict.outputs import difference
from codetrial.verdict.pool import JudgePool

SUITE = {t.id: t for t in load_suite("programs")}
ASKED = Asked.of(get_profile("contest"), "whole", None)


@pytest.fixture(scope="module")
def pool() -> Iterator[JudgePool]:
    judges = JudgePool(1, SandboxPolicy(Limits()))
    yield judges
    judges.close()


def judged(pool: JudgePool, task: ProgramTask, code: str) -> Verdict:
    return PROGRAM.check(pool, task, fenced(code), ASKED).result()


def test_the_suite_has_contest_problems_with_samples_hidden_cases_and_checkers() -> None:
    assert len(SUITE) >= 10
    assert sum(t.checker is not None for t in SUITE.values()) >= 2
    assert any(t.compare == "float" for t in SUITE.values())
    for task in SUITE.values():
        assert task.kind == "program" and task.trust == "trusted-side" and task.reference
        for heading in ("## Input", "## Output", "## Constraints", "## Samples"):
            assert heading in task.statement, (task.id, heading)
        for case in task.samples:  # the samples shown are the samples judged
            assert case.input in task.statement and case.output in task.statement
        assert len(task.hidden) >= 8
        if task.id != "cubic-root":  # its input is four numbers, whatever their size
            assert max(len(c.input) for c in task.hidden) > 10_000, task.id


def test_check_references_passes_every_problem() -> None:
    done = cli("check", "--references", "--suite", "programs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(" passed ") == len(SUITE), done.stdout


def knows_only_the_samples(task: ProgramTask) -> str:
    answers = {case.input: case.output for case in task.samples}
    return (
        f"import sys\nanswers = {answers!r}\n"
        "sys.stdout.write(answers.get(sys.stdin.read(), '0\\n'))\n"
    )


def test_a_program_that_knows_only_the_samples_fails_every_problem(pool: JudgePool) -> None:
    for task in SUITE.values():
        verdict = judged(pool, task, knows_only_the_samples(task))
        assert verdict.outcome is Outcome.FAILED, (task.id, verdict.detail)
        assert verdict.detail == "a hidden case failed (failed)"
        assert verdict.feedback is None  # nothing of a hidden case reaches the model
        assert "passed" in verdict.visible_output and verdict.hidden_output


def test_a_wrong_sample_is_told_with_its_input_and_both_outputs(pool: JudgePool) -> None:
    verdict = judged(pool, SUITE["max-subarray"], "input()\nprint(sum(map(int, input().split())))")
    assert verdict.outcome is Outcome.FAILED
    assert verdict.feedback is not None
    assert (
        "Sample case 1 failed: wrong answer (token 1: expected '4', got '-1')" in verdict.feedback
    )
    assert (
        "-2 1 -3 4 -1" in verdict.feedback and "Expected output:\n```\n4\n```" in verdict.feedback
    )


def test_a_crash_is_an_error_with_its_traceback(pool: JudgePool) -> None:
    verdict = judged(pool, SUITE["max-subarray"], "print(1 // 0)")
    assert verdict.outcome is Outcome.ERROR
    assert verdict.feedback is not None and "ZeroDivisionError" in verdict.feedback


def test_reading_standard_input_twice_gives_no_second_copy(pool: JudgePool) -> None:
    # /dev/stdin opened anew reads the input again from its start, so a program that
    # prints what it read each time prints two answers: a wrong one.
    code = (
        "for _ in range(2):\n"
        "    data = open('/dev/stdin').read().split()\n"
        "    print(max(int(v) for v in data[1:]))\n"
    )
    assert judged(pool, SUITE["max-subarray"], code).outcome is Outcome.FAILED


def test_a_flood_of_output_is_the_output_limit(pool: JudgePool) -> None:
    verdict = judged(pool, SUITE["max-subarray"], "while True:\n    print('4' * 100000)")
    assert verdict.outcome is Outcome.OUTPUT_LIMIT


def test_an_early_exit_of_0_is_judged_by_what_it_printed(pool: JudgePool) -> None:
    code = "import sys\nsys.stderr.write('passed 1 of 1\\n')\nsys.exit(0)"
    verdict = judged(pool, SUITE["max-subarray"], code)
    assert verdict.outcome is Outcome.FAILED
    assert verdict.feedback is not None and "expected 1 tokens, got 0" in verdict.feedback


def test_a_program_may_end_with_exit_or_quit_as_under_python3(pool: JudgePool) -> None:
    """The sandbox's Python starts without `site`, which defines `exit` and `quit`;
    a program ends with them as it would under `python3`: by its exit's code."""
    task = SUITE["max-subarray"]
    assert task.reference is not None
    for ending in ("exit()", "quit(0)", "exit(None)"):
        assert judged(pool, task, f"{task.reference}\n{ending}\n").outcome is Outcome.PASSED
    assert judged(pool, task, f"{task.reference}\nquit(3)\n").outcome is Outcome.ERROR


def test_a_program_past_the_cpu_limit_times_out(pool: JudgePool) -> None:
    assert judged(pool, SUITE["bracket-depth"], "while True:\n    pass").outcome is Outcome.TIMEOUT


def test_a_checker_accepts_another_right_answer_and_says_why_a_wrong_one_is_not(
    pool: JudgePool,
) -> None:
    last_pair = (
        "import sys\n"
        "data = sys.stdin.read().split()\n"
        "n, k = int(data[0]), int(data[1])\n"
        "values = [int(v) for v in data[2:2 + n]]\n"
        "seen = {}\n"
        "found = '-1'\n"
        "for j in range(n, 0, -1):\n"
        "    if k - values[j - 1] in seen:\n"
        "        found = f'{j} {seen[k - values[j - 1]]}'\n"
        "        break\n"
        "    seen.setdefault(values[j - 1], j)\n"
        "print(found)\n"
    )
    assert judged(pool, SUITE["pair-sum"], last_pair).outcome is Outcome.PASSED
    wrong = judged(pool, SUITE["pair-sum"], "print('1 3')")
    assert wrong.outcome is Outcome.FAILED and wrong.feedback is not None
    assert "the checker says: a_1 + a_3 is not 9" in wrong.feedback


def test_output_shaped_like_the_checkers_input_is_only_data(pool: JudgePool) -> None:
    forged = json.dumps({"input": "1 0\n", "expected": "1\n", "output": "1\n"})
    code = f"print({forged!r})\nprint('1 2')"
    assert judged(pool, SUITE["task-order"], code).outcome is Outcome.FAILED


@pytest.mark.parametrize(
    ("mode", "expected", "got", "same"),
    [
        ("tokens", "1 2\n3\n", "1  2 3\r\n\n", True),
        ("tokens", "1 2\n", "1 2 3\n", False),
        ("tokens", "1.0\n", "1\n", False),
        ("exact", "1 2\n", "1 2\n", True),
        ("exact", "1 2\n", "1 2", False),
        ("float", "0.333333\n", "0.3333334\n", True),
        ("float", "1000000\n", "1000000.5\n", True),
        ("float", "2.5\n", "2.6\n", False),
        ("float", "2.5 yes\n", "2.5 no\n", False),
        ("float", "1.0\n", "nan\n", False),
    ],
)
def test_outputs_are_compared_as_contest_judges_compare_them(
    mode: str, expected: str, got: str, same: bool
) -> None:
    assert (difference(mode, expected, got, abs_tol=1e-6, rel_tol=1e-6) is None) is same


def write_problem(folder: Path, settings: str) -> Path:
    (folder / "samples").mkdir(parents=True)
    (folder / "statement.md").write_text("# Echo\n\nPrint the input.\n")
    (folder / "samples" / "1.in").write_text("1\n")
    (folder / "samples" / "1.out").write_text("1\n")
    (folder / "problem.toml").write_text(settings)
    return folder


def test_a_checker_that_fails_is_the_problems_fault_not_the_models(
    pool: JudgePool, tmp_path: Path
) -> None:
    folder = write_problem(tmp_path / "echo", "")
    (folder / "checker.py").write_text("import json, sys\njson.load(sys.stdin)\nsys.exit(3)\n")
    verdict = judged(pool, load_problem(folder, "user"), "print(input())")
    assert verdict.outcome is Outcome.INFRA_ERROR and verdict.feedback is None
    assert verdict.detail == "the checker failed on case 1 (exit code 3)"


def test_an_interactive_problem_is_refused_when_loaded(tmp_path: Path) -> None:
    folder = write_problem(tmp_path / "guess", "interactive = true\n")
    with pytest.raises(TaskFormatError, match="an interactive problem"):
        load_problem(folder, "user")


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ('compare = "lines"\n', "field 'compare' must be one of"),
        ("cpu_s = 0\n", "field 'cpu_s' must be a number, 1 or more"),
        ("memory = 5\n", "unknown field 'memory'"),
    ],
)
def test_bad_settings_are_named(tmp_path: Path, settings: str, says: str) -> None:
    with pytest.raises(TaskFormatError, match=says):
        load_problem(write_problem(tmp_path / "echo", settings), "user")


def test_a_problem_is_asked_judged_repaired_stored_and_rejudged(tmp_path: Path) -> None:
    task = SUITE["bracket-depth"]
    backend = ScriptedBackend(
        {"Nesting Depth": [fenced("print(0)")], "Sample case 1": [fenced(task.reference or "")]},
        "scripted/contest",
    )
    run = codetrial.run(
        "programs",
        ["scripted/contest"],
        runs_dir=tmp_path,
        name="contest",
        backends={"scripted/contest": backend},
        task_ids=["bracket-depth"],
    )
    (row,) = run.table()
    assert row["outcome"] == "failed" and row["passed_after_repair"]
    repair = backend.requests[-1][-1].content
    assert "Sample case 1 failed: wrong answer (token 1: expected '2', got '0')" in repair
    assert run.manifest.trust == {"bracket-depth": "trusted-side"}
    again = rejudge(run.path, workers=1)
    assert again.identical
