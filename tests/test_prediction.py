"""Output predictions: LiveCodeBench's test-output prediction and code execution
scenarios, on the programs suite and on LiveCodeBench's own files, run end to end on
the scripted backend; the right output is what the trusted program prints in the
sandbox."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, cli

from codetrial.config import Limits
from codetrial.errors import ConfigError, TaskFormatError
from codetrial.gate import get_profile
from codetrial.kinds import Asked, load_suite
from codetrial.kinds.prediction import PREDICTION, stated
from codetrial.records import Message, Outcome, Verdict
from codetrial.rerun import rejudge
from codetrial.runs import Run
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks.prediction import PredictionTask
from codetrial.verdict.pool import JudgePool

PROBLEMS = {t.id: t for t in load_suite("programs")}
OUTPUT = {t.id: t for t in load_suite("programs-output")}
EXECUTION = {t.id: t for t in load_suite("programs-execution")}
CONTESTS = FIXTURES / "contests"
ASKED = Asked.of(get_profile("off"), "whole", None)


@pytest.fixture(scope="module")
def pool() -> Iterator[JudgePool]:
    judges = JudgePool(1, SandboxPolicy(Limits()))
    yield judges
    judges.close()


def judged(pool: JudgePool, task: PredictionTask, reply: str) -> Verdict:
    return PREDICTION.check(pool, task, reply, ASKED).result()


def block(text: str) -> str:
    return f"Running it in my head, it prints:\n\n```\n{text}```\n"


def test_the_suites_ask_about_small_hidden_inputs_of_every_problem() -> None:
    for suite, scenario in ((OUTPUT, "output"), (EXECUTION, "execution")):
        assert len(suite) >= 50 and {t.id.split("/")[0] for t in suite.values()} >= {
            "bracket-depth",
            "pair-sum",
            "triangle-area",
        }
        for task in suite.values():
            assert task.kind == "prediction" and task.trust == "trusted-side"
            assert task.scenario == scenario and task.program and task.stdin == task.input
            samples = {case.input for case in PROBLEMS[task.id.split("/")[0]].samples}
            assert len(task.input) <= 120 and task.input not in samples
    assert OUTPUT["pair-sum/2"].checker and not EXECUTION["pair-sum/2"].checker
    assert "```python\nimport sys" in PREDICTION.asked_text(EXECUTION["bracket-depth/1"])


def test_check_references_holds_every_stated_output_against_the_program() -> None:
    for suite in ("programs-output", "programs-execution"):
        done = cli("check", "--references", "--suite", suite)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.count(" passed ") == len(OUTPUT), done.stdout


def test_the_right_output_is_what_the_program_prints_in_the_sandbox(pool: JudgePool) -> None:
    task = EXECUTION["bracket-depth/1"]
    assert judged(pool, task, block("-1\n")).outcome is Outcome.PASSED
    assert judged(pool, task, block("4\n")).outcome is Outcome.FAILED
    # Another program on the same input: the stated output no longer counts, its output does.
    other = dataclasses.replace(task, program="print(len(input()))")
    assert judged(pool, other, block("-1\n")).outcome is Outcome.FAILED
    assert judged(pool, other, block("4\n")).outcome is Outcome.PASSED
    wrong = dataclasses.replace(task, expected="3\n")
    (reference, _) = PREDICTION.references(pool, wrong, ASKED)
    assert reference is not None and reference.result().outcome is Outcome.FAILED


def test_a_program_that_fails_on_its_input_is_the_tasks_fault(pool: JudgePool) -> None:
    task = dataclasses.replace(EXECUTION["bracket-depth/1"], program="raise SystemExit(3)")
    verdict = judged(pool, task, block("-1\n"))
    assert verdict.outcome is Outcome.INFRA_ERROR and "failed on its input" in verdict.detail


def test_outputs_are_compared_as_the_program_kind_compares_them(pool: JudgePool) -> None:
    assert judged(pool, EXECUTION["bracket-depth/1"], block("  -1\n\n")).outcome is Outcome.PASSED
    area = OUTPUT["triangle-area/1"]
    assert judged(pool, area, block("200000000.0000001\n")).outcome is Outcome.PASSED
    assert judged(pool, area, block("200001000\n")).outcome is Outcome.FAILED


def test_a_problem_with_a_checker_takes_any_right_output(pool: JudgePool) -> None:
    task = OUTPUT["cubic-root/1"]  # x^3 = 0: the reference prints -0.0000000000
    assert task.expected == "-0.0000000000\n"
    assert judged(pool, task, block("0\n")).outcome is Outcome.PASSED
    wrong = judged(pool, task, block("1\n"))
    assert wrong.outcome is Outcome.FAILED and "the checker says" in wrong.detail
    # What the reference printed is the one answer when its code is what is shown.
    assert judged(pool, EXECUTION["cubic-root/1"], block("0\n")).outcome is Outcome.FAILED


def test_answers_are_read_from_the_last_block_or_an_assertion() -> None:
    stdin_task, value_task = EXECUTION["bracket-depth/1"], load_lcb_execution()[0]
    assert stated(stdin_task, "```\n1\n```\nno wait:\n```text\n-1\n```") == "-1\n"
    assert stated(stdin_task, "It prints -1.") is None
    assert stated(stdin_task, "<think>```\n5\n```</think>The answer is -1.") is None
    assert stated(value_task, "```python\nassert f(x = 1) == [1, 2]\n```") == "[1, 2]"
    assert stated(value_task, "so:\nassert f(x = 1) == 'a'\n") == "'a'"
    assert stated(value_task, "```python\n[3]\n```") == "[3]"
    assert stated(value_task, "It returns three.") is None


def test_a_backend_that_continues_replies_is_given_the_answers_start() -> None:
    system = Message("system", "")
    stdin_task, value_task = EXECUTION["bracket-depth/1"], load_lcb_execution()[0]
    assert PREDICTION.opening(stdin_task, ASKED, system, True)[-1] == Message("assistant", "```\n")
    start = PREDICTION.opening(value_task, ASKED, system, True)[-1].content
    assert start == f"```python\nassert {value_task.input} == "
    assert stated(value_task, start + "3\n```") == "3"
    assert PREDICTION.opening(stdin_task, ASKED, system, False)[-1].role == "user"


def test_an_answer_is_data_never_run(pool: JudgePool, tmp_path: Path) -> None:
    task = load_lcb_execution()[0]
    marker = tmp_path / "ran"
    for answer in (
        f"__import__('pathlib').Path({str(marker)!r}).touch()",
        task.input,  # the call itself, which would be right if it were run
        "[x for x in range(3)]",
        "[" * 10_000 + "]" * 10_000,  # nested past what a literal may be
        "9" * 5000,  # an integer past the digits Python converts
        "1" * 200_000,  # past the longest literal read
    ):
        verdict = judged(pool, task, f"```python\nassert {task.input} == {answer}\n```")
        assert verdict.outcome is Outcome.FAILED and "not a Python literal" in verdict.detail
    assert not marker.exists()


def run_scripted(tmp_path: Path, suite: str, script: dict[str, list[str]], *ids: str) -> Run:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    tasks = [arg for task_id in ids for arg in ("--task", task_id)]
    runs = tmp_path / "runs"
    done = cli("run", "--suite", suite, "--model", f"scripted/{path}", *tasks, "--runs-dir", runs)
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = runs.iterdir()
    return Run(run_dir)


def test_a_run_of_programs_output_passes_right_fails_wrong_and_records_no_answer(
    tmp_path: Path,
) -> None:
    script = {
        "# Nesting Depth": [block("-1\n")],  # bracket-depth/1: "((((" is unbalanced
        "# Coin Ways": [block("5\n")],  # coin-ways/1: one way to pay 0, not five
        "# Best Stretch": ["It prints the largest sum of the numbers."],
    }
    run = run_scripted(
        tmp_path,
        "programs-output",
        script,
        "bracket-depth/1",
        "coin-ways/1",
        "max-subarray/1",
    )
    outcomes = {row["task_id"]: (row["outcome"], row["attempts"]) for row in run.table()}
    assert outcomes == {
        "bracket-depth/1": ("passed", 1),
        "coin-ways/1": ("failed", 1),
        "max-subarray/1": ("no_code", 1),
    }
    attempts = {a.task_id: a for a in run.attempts()}
    assert attempts["coin-ways/1"].detail == "wrong answer (token 1: expected '1', got '5')"
    assert attempts["bracket-depth/1"].code == "-1\n"
    assert "no ``` block" in attempts["max-subarray/1"].detail
    assert run.manifest.trust["coin-ways/1"] == "trusted-side"
    kept = [p.read_text() for p in (run.path / "generated_code").rglob("test_output_*.txt")]
    assert any("right output:\n1\n" in text and "answer:\n5\n" in text for text in kept)
    assert rejudge(run.path, workers=1).identical


def test_a_run_of_programs_execution_judges_by_what_the_code_prints(tmp_path: Path) -> None:
    script = {
        "depth = max(depth, len(stack))": [block("-1\n")],
        "ways = [1] + [0] * top": [block("0\n")],
    }
    run = run_scripted(tmp_path, "programs-execution", script, "bracket-depth/1", "coin-ways/1")
    outcomes = {row["task_id"]: row["outcome"] for row in run.table()}
    assert outcomes == {"bracket-depth/1": "passed", "coin-ways/1": "failed"}


def test_a_prediction_suite_has_no_gate_to_choose(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no code to gate"):
        PREDICTION.gate("programs-output", list(OUTPUT.values()), "contest")


def load_lcb_execution() -> list[PredictionTask]:
    return list(
        load_suite("livecodebench-execution", data=CONTESTS / "livecodebench-execution.jsonl")
    )


def test_livecodebench_code_execution_runs_the_code_on_the_call(pool: JudgePool) -> None:
    tasks = {t.id: t for t in load_lcb_execution()}
    task = tasks["sample_0"]
    assert task.compare == "value" and task.released == "2023-05-07"
    right = judged(pool, task, f"```python\nassert {task.input} == {task.expected}\n```")
    assert right.outcome is Outcome.PASSED
    assert judged(pool, task, "```python\n7\n```").outcome is Outcome.FAILED
    # A value is a value however it is written; a list is not a tuple.
    runs = tasks["sample_1"]
    assert judged(pool, runs, "```python\n['a',  \"bb\", 'cc']\n```").outcome is Outcome.PASSED
    assert judged(pool, runs, "```python\n('a', 'bb', 'cc')\n```").outcome is Outcome.FAILED


def test_check_references_catches_a_stated_output_the_code_does_not_return(
    tmp_path: Path,
) -> None:
    lines = (CONTESTS / "livecodebench-execution.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["output"] = "99"
    broken = tmp_path / "execution.jsonl"
    broken.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    for data, code in ((CONTESTS / "livecodebench-execution.jsonl", 0), (broken, 1)):
        done = cli("check", "--references", "--suite", "livecodebench-execution", "--data", data)
        assert done.returncode == code, done.stdout + done.stderr
    assert "sample_0" in done.stdout and "failed" in done.stdout


def test_livecodebench_test_output_prediction_is_judged_against_the_stated_output(
    pool: JudgePool,
) -> None:
    (task, other) = load_suite("livecodebench-output", data=CONTESTS / "livecodebench-output.jsonl")
    assert task.id == "3000/0" and task.program is None and task.compare == "value"
    assert task.input == "sumOfEvens([1, 2, 3, 4])" and "class Solution" in task.shown
    assert other.expected == "True"  # JSON's true, as Python writes it
    assert judged(pool, task, "```python\nassert sumOfEvens([1, 2, 3, 4]) == 6\n```").outcome is (
        Outcome.PASSED
    )
    assert judged(pool, task, "assert sumOfEvens([1, 2, 3, 4]) == 10").outcome is Outcome.FAILED
    said = '```python\nassert allDistinct("abc") == True\n```'
    assert judged(pool, other, said).outcome is Outcome.PASSED
    assert PREDICTION.references(pool, task, ASKED) == (None, None)


def test_a_livecodebench_record_out_of_shape_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "test.jsonl"
    bad.write_text(json.dumps({"question_id": "1", "function_name": "f", "test": "[]"}) + "\n")
    with pytest.raises(TaskFormatError, match=r"test.jsonl:1: field 'test'"):
        load_suite("livecodebench-output", data=bad)
