"""codetrial from Python: the public names, and each function of the API on real
sandboxes, a real store and the scripted backend."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import codetrial
from codetrial import api, runs
from codetrial.errors import ConfigError, StoreError, TaskFormatError
from codetrial.records import AttemptRecord, Outcome
from codetrial.tasks import Task
from codetrial.verdict import pool as pool_module
from tests.conftest import POLYGLOT, cli, fenced

PUBLIC = {
    "AttemptRecord",
    "CodetrialError",
    "Comparison",
    "Estimate",
    "Judge",
    "ModelSelection",
    "Outcome",
    "Progress",
    "Run",
    "SelectionResult",
    "Task",
    "TaskResult",
    "TestResult",
    "Verdict",
    "ask",
    "board",
    "compare",
    "configure",
    "decide",
    "evaluate",
    "judge",
    "load_tasks",
    "open_run",
    "plan_sweep",
    "review",
    "run",
    "run_sweep",
    "select",
    "write_board",
}
CLI = Path(codetrial.__file__).parent / "cli"
WRONG = "def {name}(*args, **kwargs):\n    return None\n"


def test_the_public_names_are_exactly_these_and_import_lazily() -> None:
    assert set(codetrial.__all__) == PUBLIC
    namespace: dict[str, object] = {}
    exec("from codetrial import *", namespace)
    assert set(namespace) - {"__builtins__"} == PUBLIC
    for name in PUBLIC:
        value = getattr(codetrial, name)
        assert value.__module__.startswith("codetrial."), name
        assert (value.__doc__ or "").strip(), f"{name} has no docstring"
    public = {n for n in dir(codetrial) if not n.startswith("_")}
    modules = {n for n in public if isinstance(getattr(codetrial, n), types.ModuleType)}
    assert public - modules == PUBLIC
    with pytest.raises(AttributeError):
        codetrial.pipeline_internals  # type: ignore[attr-defined]  # noqa: B018
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import codetrial, sys; print(sorted(m for m in sys.modules "
            "if m.startswith('codetrial')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert loaded.strip() == "['codetrial']"


@pytest.mark.parametrize("command", ["run", "evaluate", "report", "compare"])
def test_the_commands_call_the_api_not_the_machinery(command: str) -> None:
    """These commands import the public API, the command line's own modules and, for
    the defaults their help shows, the configuration: nothing of the pipeline."""
    tree = ast.parse((CLI / f"{command}.py").read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    ours = {m for m in imported if m.split(".")[0] == "codetrial"}
    allowed = {"codetrial", "codetrial.config", "codetrial.samples"}
    assert {m for m in ours if not m.startswith("codetrial.cli")} <= allowed


def test_judge_keeps_one_pool_for_many_candidates(contracts10: dict[str, Task]) -> None:
    tasks = [contracts10["palindrome"], contracts10["two_sum"]]
    with codetrial.Judge(workers=1) as judge:
        assert judge.isolation.startswith("bwrap+")
        verdicts = [judge(t.reference or "", t) for t in tasks]
        wrong = [judge(WRONG.format(name=t.entry_point), t) for t in tasks]
    assert [v.outcome for v in verdicts] == [Outcome.PASSED] * 2
    assert [v.outcome for v in wrong] == [Outcome.FAILED] * 2
    assert codetrial.judge("def broken(:\n", tasks[0]).outcome is Outcome.SYNTAX_ERROR


def test_a_judge_starts_its_sandboxes_once_and_tells_tasks_apart_by_content(
    contracts10: dict[str, Task], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[object] = []
    real = pool_module.open_sandbox

    def counted(*args: object, **kwargs: object) -> object:
        opened.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pool_module, "open_sandbox", counted)
    palindrome = contracts10["palindrome"]
    untested = dataclasses.replace(palindrome, tests=())
    wrong = WRONG.format(name=palindrome.entry_point)
    with codetrial.Judge(workers=1) as judge:
        verdicts = [judge(wrong, palindrome), judge(wrong, untested), judge(wrong, palindrome)]
    assert len(opened) == 1
    assert verdicts[0] == verdicts[2] and verdicts[0].outcome is Outcome.FAILED
    assert verdicts[1].outcome is codetrial.judge(wrong, untested).outcome
    assert verdicts[1].outcome is not Outcome.FAILED


def test_judge_refuses_a_workspace_task(tmp_path: Path) -> None:
    exercise = tmp_path / "suite" / "hello"
    (exercise / ".meta").mkdir(parents=True)
    (exercise / ".docs").mkdir()
    (exercise / ".docs" / "instructions.md").write_text("Say hello.\n")
    (exercise / "hello.py").write_text("def hello():\n    pass\n")
    (exercise / "hello_test.py").write_text(
        "import unittest\nfrom hello import hello\n\n\nclass T(unittest.TestCase):\n"
        "    def test(self):\n        self.assertEqual(hello(), 'hi')\n"
    )
    (exercise / ".meta" / "config.json").write_text(
        json.dumps({"files": {"solution": ["hello.py"], "test": ["hello_test.py"]}})
    )
    (task,) = codetrial.load_tasks(str(tmp_path / "suite"))
    with pytest.raises(ConfigError, match="function tasks"):
        codetrial.judge("x = 1\n", task)


def test_evaluate_takes_dicts_and_gives_a_run(tmp_path: Path) -> None:
    tasks = codetrial.load_tasks("contracts10", task_ids=["palindrome", "two_sum"])
    samples = [{"task_id": t.id, "solution": t.reference} for t in tasks]
    samples += [{"task_id": t.id, "solution": WRONG.format(name=t.entry_point)} for t in tasks]
    run = codetrial.evaluate(samples, suite="contracts10", runs_dir=tmp_path)
    assert run.models == ["samples/python"]
    # contracts10's tasks have no heavy inputs: efficiency is measured only when asked
    assert not run.manifest.config.efficiency and not (run.path / "efficiency.json").exists()
    asked = codetrial.evaluate(samples, suite="contracts10", runs_dir=tmp_path, efficiency=True)
    assert asked.manifest.config.efficiency and (asked.path / "efficiency.json").is_file()
    assert run.manifest.backends["samples/python"]["file"] == "(objects passed in Python)"
    rows = run.table()
    assert len(rows) == 4 and {r["sample"] for r in rows} == {0, 1}
    assert sorted(r["passed"] for r in rows) == [False, False, True, True]
    estimate = run.pass_at_k()["samples/python"][1]
    assert estimate is not None and estimate.value == 0.5
    assert (run.path / "report.html").is_file() and (run.path / "results.json").is_file()
    document = run.as_dict()
    assert document == json.loads((run.path / "results.json").read_text())
    chosen = codetrial.select(run, "random,first,oracle")
    assert [s.name for s in chosen.models[0].strategies] == ["random", "first", "oracle"]
    assert chosen.as_dicts() == json.loads(chosen.path.read_text())
    oracle = chosen.models[0].strategies[2]
    assert oracle.estimate.value == 1.0
    with pytest.raises(TaskFormatError, match="item 1"):
        codetrial.evaluate(["not a dict"], suite="contracts10", runs_dir=tmp_path)  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="unknown"):
        codetrial.select(run, "random,nonsense")


class Recorder:
    """Progress as a caller of the API might watch it."""

    def __init__(self) -> None:
        self.started: list[tuple[Path, int]] = []
        self.records: list[AttemptRecord] = []

    def start(self, run_dir: Path, total: int) -> None:
        self.started.append((run_dir, total))

    def advance(self, record: AttemptRecord) -> None:
        self.records.append(record)


def test_run_open_run_and_compare(tmp_path: Path, contracts10: dict[str, Task]) -> None:
    palindrome, two_sum = contracts10["palindrome"], contracts10["two_sum"]
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "palindrome": [fenced(palindrome.reference or "")],
                "two_sum": [fenced(WRONG.format(name="two_sum")), fenced(two_sum.reference or "")],
            }
        )
    )
    watched = Recorder()
    run = codetrial.run(
        "contracts10",
        [f"scripted/{script}"],
        task_ids=["palindrome", "two_sum"],
        runs_dir=tmp_path / "runs",
        progress=watched,
    )
    assert watched.started == [(run.path, 2)]
    assert [(r.task_id, r.attempt, r.passed) for r in watched.records] == [
        ("palindrome", 0, True), ("two_sum", 0, False), ("two_sum", 1, True),
    ]  # fmt: skip
    table = {r["task_id"]: r for r in run.table()}
    assert table["two_sum"]["outcome"] == "failed" and table["two_sum"]["passed_after_repair"]
    assert table["two_sum"]["attempts"] == 2
    again = codetrial.open_run(run.path)
    assert again.table() == run.table() and again.manifest == run.manifest
    assert again.pass_at_k(after_repair=True)[f"scripted/{script}"][1].value == 1.0  # type: ignore[union-attr]
    assert again.report() == run.path / "report.html"
    assert [(a.task_id, a.attempt) for a in again.attempts()] == [
        ("palindrome", 0),
        ("two_sum", 0),
        ("two_sum", 1),
    ]
    references = codetrial.evaluate(
        [{"task_id": t.id, "solution": t.reference} for t in (palindrome, two_sum)],
        suite="contracts10",
        runs_dir=tmp_path / "runs",
    )
    comparison = codetrial.compare(run, references, str(tmp_path / "compare.html"))
    assert comparison.as_dict()["gained"] == ["two_sum"] and comparison.passed_b == 2
    assert (tmp_path / "compare.html").is_file()
    with pytest.raises(StoreError, match="not a codetrial run directory"):
        codetrial.open_run(tmp_path)
    with pytest.raises(ConfigError, match=r"models takes a list of names: \['embedded'\]"):
        codetrial.run("contracts10", "embedded")
    with pytest.raises(ConfigError, match="--tries 2 means --repair-attempts 1"):
        codetrial.run("contracts10", ["scripted/x.json"], tries=2, repair_attempts=3)


def test_the_docstring_examples_run() -> None:
    tried = 0
    for module in (api, runs):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
        tried += result.attempted
    assert tried >= 3


def test_a_benchmark_is_asked_in_its_prompt_profile(tmp_path: Path) -> None:
    """Under evalplus-instruct a HumanEval task's first try is EvalPlus's request, with
    no system message; a backend that cannot continue a reply gets the request alone.
    The profile is a condition of the run, and only benchmark suites take one. Its
    candidates are judged as their definitions: an example call that fails at import
    fails the reply under codetrial's profile, not under EvalPlus's."""
    (task,) = codetrial.load_tasks("humaneval", task_ids=["HumanEval/0"])
    assert isinstance(task, Task)
    script = tmp_path / "script.json"
    example = f"\nassert {task.entry_point}([1.0, 1.5], 0.1), 'an example that is wrong'\n"
    reply = fenced(task.prompt + (task.reference or "") + example)
    script.write_text(json.dumps({task.entry_point: [reply]}))
    runs = {}
    for profile in ("codetrial", "evalplus-instruct"):
        runs[profile] = codetrial.run(
            "humaneval",
            [f"scripted/{script}"],
            task_ids=[task.id],
            prompt_profile=profile,
            runs_dir=tmp_path / profile,
            efficiency=False,
        )
    asked = {
        p: [(m["role"], m["content"]) for m in r.attempts()[0].messages] for p, r in runs.items()
    }
    assert [role for role, _ in asked["codetrial"]] == ["system", "user"]
    ((role, request),) = asked["evalplus-instruct"]
    assert role == "user" and request.startswith("Please provide a self-contained Python script")
    assert f"```\n{task.prompt.strip()}\n```\n" in request
    assert [r.table()[0]["passed"] for r in runs.values()] == [False, True]
    sanitized = runs["evalplus-instruct"].attempts()[0]
    assert "an example" in sanitized.raw_response and "an example" not in (sanitized.code or "")
    assert runs["evalplus-instruct"].manifest.config.prompt_profile == "evalplus-instruct"
    default, _ = codetrial.configure("humaneval", task_ids=[task.id])
    assert default.prompt_profile == "evalplus-instruct"
    with pytest.raises(ConfigError, match="--prompt-profile is for benchmark tasks"):
        codetrial.configure("contracts10", prompt_profile="evalplus-instruct")
    with pytest.raises(ConfigError, match="unknown prompt profile 'evalplus'; known: codetrial"):
        codetrial.configure("humaneval", prompt_profile="evalplus")


def test_a_path_may_be_given_as_a_str(tmp_path: Path, contracts10: dict[str, Task]) -> None:
    tasks = codetrial.load_tasks("polyglot-python", data=str(POLYGLOT), task_ids=["proverb"])
    assert [t.id for t in tasks] == ["proverb"]
    config, _ = codetrial.configure(
        "polyglot-python", ["scripted"], data=str(POLYGLOT), wheels=str(tmp_path), limit=1
    )
    assert config.data == POLYGLOT and config.wheels == tmp_path
    samples = tmp_path / "samples.jsonl"
    reference = contracts10["two_sum"].reference
    samples.write_text(json.dumps({"task_id": "two_sum", "solution": reference}) + "\n")
    run = codetrial.evaluate(str(samples), "contracts10", runs_dir=str(tmp_path / "runs"))
    assert [r["passed"] for r in run.table()] == [True]
    chosen = codetrial.select(str(run.path), "first", tests=None, ranker=None)
    assert chosen.models[0].strategies[0].estimate.value == 1.0
    page = codetrial.compare(str(run.path), str(run.path), out=str(tmp_path / "same.html"))
    assert page.passed_b == 1 and (tmp_path / "same.html").is_file()
    assert codetrial.board([str(tmp_path / "runs")]).suites


def test_a_priced_model_s_tokens_are_counted_in_dollars(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"two_sum": [fenced(contracts10["two_sum"].reference or "")]}))
    model = f"scripted/{script}"
    run = codetrial.run(
        "contracts10", [model], task_ids=["two_sum"], runs_dir=tmp_path, prices={model: "3/15"}
    )
    assert run.manifest.config.prices[model].completion == 15
    (attempt,) = run.attempts()
    assert attempt.prompt_tokens and attempt.completion_tokens
    expected = (attempt.prompt_tokens * 3 + attempt.completion_tokens * 15) / 1e6
    (row,) = run.as_dict()["summary"]
    assert row["cost_usd"] == pytest.approx(expected) and expected > 0
    (entry,) = codetrial.board([run.path]).suites["contracts10"]
    assert entry.integrity.cost_usd == pytest.approx(expected)
    unpriced = codetrial.run("contracts10", [model], task_ids=["two_sum"], runs_dir=tmp_path)
    assert unpriced.as_dict()["summary"][0]["cost_usd"] == 0
    with pytest.raises(ConfigError, match="--price names other, which is no --model"):
        codetrial.configure("contracts10", [model], prices={"other": "1/1"})
    with pytest.raises(ConfigError, match=r"--price takes MODEL=IN/OUT.* not '3'"):
        codetrial.configure("contracts10", [model], prices={model: "3"})


def test_the_price_option_reads_model_equals_in_slash_out(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"two_sum": ["no code"]}))
    result = cli(
        "run", "--model", f"scripted/{script}", "--price", f"scripted/{script}=0.5/2",
        "--task", "two_sum", "--runs-dir", tmp_path, "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (run_dir,) = (tmp_path).glob("*-contracts10")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["prices"] == {
        f"scripted/{script}": {"prompt": 0.5, "completion": 2.0}
    }
    refused = cli("run", "--model", "scripted", "--price", "2.5/10", "--runs-dir", tmp_path)
    assert refused.returncode == 2 and "--price takes MODEL=IN/OUT" in refused.stderr
