"""Workspace tasks through the whole product: `codetrial run` on the aider polyglot
exercises with the scripted backend, in each edit format, and what is stored,
reported and re-judged. The tasks have teeth: replaying each reference passes, a
response that cannot be applied is a malformed_edit, and try 2 repairs it."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codetrial.config import Limits, RunConfig
from codetrial.gate import get_profile
from codetrial.models.scripted import ScriptedBackend
from codetrial.pipeline import Trial, run_trial
from codetrial.records import Outcome
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore, new_manifest
from codetrial.tasks import WorkspaceTask
from codetrial.tasks.workspace import load_exercism
from codetrial.verdict.pool import JudgePool
from tests.conftest import CLI_ENV, CODETRIAL, POLYGLOT

MALFORMED = {
    "whole": "I would change the class, but I will not show the file.",
    "diff": "react.py\n```python\n<<<<<<< SEARCH\nclass Nowhere:\n=======\nx = 1\n"
    ">>>>>>> REPLACE\n```\n",
    "udiff": "```diff\n--- a/react.py\n+++ b/react.py\n@@ -1,2 +1,2 @@\n-class Nowhere:\n"
    "+class Somewhere:\n```\n",
}


@pytest.fixture(scope="module")
def exercises() -> dict[str, WorkspaceTask]:
    return {task.id: task for task in load_exercism(POLYGLOT, "polyglot-python")}


def _ends(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def replay(task: WorkspaceTask, edit_format: str) -> str:
    """The task's reference solution, written as a response in `edit_format`."""
    ((path, stub),) = task.files
    ((_, example),) = task.reference
    if edit_format == "whole":
        return f"{path}\n```python\n{_ends(example)}```\n"
    if edit_format == "diff":
        return (
            f"{path}\n```python\n<<<<<<< SEARCH\n{_ends(stub)}=======\n{_ends(example)}"
            ">>>>>>> REPLACE\n```\n"
        )
    diff = difflib.unified_diff(
        _ends(stub).splitlines(keepends=True),
        _ends(example).splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
    )
    return "```diff\n" + "".join(diff) + "```\n"


def script(tasks: list[WorkspaceTask], edit_format: str) -> dict[str, list[str]]:
    """Try 1 replays each reference, except react's, which cannot be applied; its try 2
    replays the reference. The keys are the file lists of the first prompt and of the
    request to fix the code."""
    found: dict[str, list[str]] = {}
    for task in tasks:
        ((path, _),) = task.files
        reference = replay(task, edit_format)
        first = MALFORMED[edit_format] if task.id == "react" else reference
        found[f"supplied files: {path}\n"] = [first]
        found[f"Fix the code in {path} "] = [reference]
    return found


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CODETRIAL, *map(str, args)], capture_output=True, text=True, env=CLI_ENV, timeout=600
    )


def scripted_run(root: Path, tasks: list[WorkspaceTask], edit_format: str, *options: str) -> Path:
    path = root / f"{edit_format}.json"
    path.write_text(json.dumps(script(tasks, edit_format)))
    runs = root / f"runs-{edit_format}"
    result = run_cli(
        "run",
        "--model",
        f"scripted/{path}",
        "--suite",
        "polyglot-python",
        "--data",
        POLYGLOT,
        "--edit-format",
        edit_format,
        "--runs-dir",
        runs,
        "--workers",
        "2",
        *options,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (run_dir,) = runs.iterdir()
    return run_dir


def results(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "results.json").read_text())
    return data


@pytest.mark.parametrize("edit_format", ["whole", "diff"])
def test_replaying_every_reference_passes_and_aider_s_columns_count_it(
    edit_format: str, exercises: dict[str, WorkspaceTask], tmp_path: Path
) -> None:
    run_dir = scripted_run(tmp_path, list(exercises.values()), edit_format)
    data = results(run_dir)
    first = {t["task_id"]: t["attempts"][0]["outcome"] for t in data["tasks"]}
    assert len(first) == 34
    assert first.pop("react") == "malformed_edit"
    assert set(first.values()) == {"passed"}, first
    assert all(t["passed_after_repair"] for t in data["tasks"])
    (edits,) = data["edits"]
    assert edits["edit_format"] == edit_format and edits["cases"] == 34
    assert [round(e["value"], 4) for e in edits["pass_after_try"]] == [round(33 / 34, 4), 1.0]
    assert edits["well_formed_cases"] == 33 and edits["malformed_edits"] == 1
    manifest = data["manifest"]
    assert manifest["config"]["edit_format"] == edit_format
    assert manifest["trust"].pop("paasio") == "in-sandbox"
    assert set(manifest["trust"].values()) == {"trusted-side"}
    assert f"edits/{edit_format}.md" in manifest["prompt_sha256"]
    assert manifest["workspaces"]["react"] == dict(exercises["react"].files)
    react = next(t for t in data["tasks"] if t["task_id"] == "react")["attempts"]
    assert "The edit could not be applied" in react[1]["messages"][-1]["content"]
    assert react[0]["files"] == dict(exercises["react"].files)
    stored = next((run_dir / "generated_code").iterdir()) / "react"
    assert (stored / "tests" / "react_test.py").read_text() == exercises["react"].tests[0].source
    assert (stored / "files_repaired" / "react.py").read_text().strip() == (
        exercises["react"].reference[0][1].strip()
    )
    assert "+class InputCell" in (stored / "changes_repaired.diff").read_text()
    report = (run_dir / "report.html").read_text()
    assert "Edits, as aider" in report and "in-sandbox" in report


def test_udiff_replays_pass_a_broken_patch_is_malformed_and_a_rerun_agrees(
    exercises: dict[str, WorkspaceTask], tmp_path: Path
) -> None:
    tasks = [exercises["react"], exercises["bowling"]]
    run_dir = scripted_run(tmp_path, tasks, "udiff", "--task", "react", "--task", "bowling")
    outcomes = {
        t["task_id"]: [a["outcome"] for a in t["attempts"]] for t in results(run_dir)["tasks"]
    }
    assert outcomes == {"react": ["malformed_edit", "passed"], "bowling": ["passed"]}
    rerun = run_cli("rerun", run_dir)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "2 (100.0 %)" in rerun.stdout and "1 (100.0 %)" in rerun.stdout


def test_the_model_sees_the_files_and_the_test_output_never_the_tests(
    exercises: dict[str, WorkspaceTask], tmp_path: Path
) -> None:
    """aider's protocol: try 1 shows the files and the instructions; try 2 continues
    the conversation with the files as try 1 left them and the test output, whose
    paths are the workspace's. The test files' source is never sent."""
    task = exercises["react"]
    broken = "react.py\n```python\nclass InputCell:\n    pass\n```\n"
    backend = ScriptedBackend(
        {
            "supplied files: react.py\n": [broken],
            "Fix the code in react.py ": [replay(task, "whole")],
        }
    )
    config = RunConfig(
        models=["scripted"],
        suite="polyglot-python",
        edit_format="whole",
        gate_profile="off",
        limits=Limits(timeout_s=30, cpu_s=10),
    )
    pool = JudgePool(1, SandboxPolicy.of(config))
    store = RunStore.create(
        tmp_path / "run",
        new_manifest("r", config, [task], backends={}, prompts={}, system_prompt="", isolation=""),
    )
    trial = Trial(config, get_profile("off"), pool, store)
    try:
        (result,) = run_trial(trial, [task], [backend], lambda record: None)
    finally:
        pool.close()
        store.close()
    assert result.first.outcome is Outcome.ERROR and result.final.outcome is Outcome.PASSED
    first, second = backend.requests
    assert [m.role for m in first] == ["system", "user", "assistant", "user"]
    assert "Answer with the complete new content" in first[0].content
    assert "class ComputeCell" in first[1].content
    assert "Implement a basic reactive" in first[3].content
    assert [m.role for m in second] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert second[1] == first[3] and second[2].content == broken
    assert "class InputCell:\n    pass" in second[3].content
    feedback = second[5].content
    assert 'File "react_test.py", line' in feedback and "/scratch" not in feedback
    assert "Fix the code in react.py to resolve the errors." in feedback
    test_source = task.tests[0].source
    for message in first + second:
        assert "def test_" not in message.content and test_source[:200] not in message.content


def test_workspace_suites_say_what_they_need(tmp_path: Path) -> None:
    no_data = run_cli(
        "run", "--model", "scripted", "--suite", "polyglot-python", "--runs-dir", tmp_path
    )
    assert no_data.returncode == 3 and "needs --data PATH" in no_data.stderr
    gate = run_cli(
        "run",
        "--model",
        "scripted",
        "--suite",
        "polyglot-python",
        "--data",
        POLYGLOT,
        "--gate",
        "builtins-only",
        "--runs-dir",
        tmp_path,
    )
    assert gate.returncode == 2 and "--gate off" in gate.stderr
    function_suite = run_cli(
        "run", "--model", "scripted", "--edit-format", "diff", "--runs-dir", tmp_path
    )
    assert (
        function_suite.returncode == 2
        and "is for workspace and repository tasks" in function_suite.stderr
    )
    unknown = run_cli(
        "run",
        "--model",
        "scripted",
        "--suite",
        "polyglot-python",
        "--data",
        POLYGLOT,
        "--edit-format",
        "wholefile",
        "--runs-dir",
        tmp_path,
    )
    assert unknown.returncode == 2 and "whole" in unknown.stderr
    tries = run_cli(
        "run",
        "--model",
        "scripted",
        "--tries",
        "3",
        "--repair-attempts",
        "1",
        "--runs-dir",
        tmp_path,
    )
    assert tries.returncode == 2 and "--tries 3 means --repair-attempts 2" in tries.stderr
    samples = tmp_path / "samples.jsonl"
    samples.write_text('{"task_id": "react", "solution": ""}\n')
    evaluate = run_cli(
        "evaluate",
        samples,
        "--suite",
        "polyglot-python",
        "--data",
        POLYGLOT,
        "--runs-dir",
        tmp_path,
    )
    assert evaluate.returncode == 2 and "takes function tasks" in evaluate.stderr
    samples.unlink()
    assert not list(tmp_path.iterdir())


def test_a_resumed_run_and_a_rerun_build_each_try_on_the_files_the_last_one_left(
    exercises: dict[str, WorkspaceTask], tmp_path: Path
) -> None:
    """In the diff format, try 2's SEARCH text exists only in what try 1 left. Try 2 is
    not generated at first (the script has no answer yet): an infra_error, which a
    resume redoes from try 1 as stored; a rerun then applies both tries again."""
    task = exercises["react"]
    ((path, stub),) = task.files
    ((_, example),) = task.reference
    half = stub.replace("self.value = None", "self.value = 0", 1)
    block = "react.py\n```python\n<<<<<<< SEARCH\n{}=======\n{}>>>>>>> REPLACE\n```\n"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"supplied files: react.py\n": [block.format(_ends(stub), _ends(half))]})
    )
    runs = tmp_path / "runs"
    first = run_cli(
        "run",
        "--model",
        f"scripted/{script}",
        "--suite",
        "polyglot-python",
        "--data",
        POLYGLOT,
        "--task",
        "react",
        "--edit-format",
        "diff",
        "--runs-dir",
        runs,
    )
    assert first.returncode == 0, first.stderr
    (run_dir,) = runs.iterdir()
    outcomes = [a["outcome"] for a in results(run_dir)["tasks"][0]["attempts"]]
    assert outcomes == ["failed", "infra_error"]
    script.write_text(
        json.dumps({"Fix the code in react.py ": [block.format(_ends(half), _ends(example))]})
    )
    resumed = run_cli("run", "--resume", run_dir)
    assert resumed.returncode == 0, resumed.stderr
    (chain,) = results(run_dir)["tasks"]
    assert [a["outcome"] for a in chain["attempts"]] == ["failed", "passed"]
    assert chain["attempts"][1]["files"][path].rstrip() == example.rstrip()
    rerun = run_cli("rerun", run_dir)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr


def test_a_third_try_continues_the_same_conversation(
    exercises: dict[str, WorkspaceTask], tmp_path: Path
) -> None:
    task = exercises["react"]
    answers = [f"react.py\n```python\nclass InputCell:\n    value = {n}\n```\n" for n in (1, 2)]
    backend = ScriptedBackend(
        {
            "supplied files: react.py\n": [answers[0]],
            "Fix the code in react.py ": [answers[1], replay(task, "whole")],
        }
    )
    config = RunConfig(
        models=["scripted"],
        suite="polyglot-python",
        edit_format="whole",
        gate_profile="off",
        repair_attempts=2,
        limits=Limits(timeout_s=30, cpu_s=10),
    )
    pool = JudgePool(1, SandboxPolicy.of(config))
    store = RunStore.create(
        tmp_path / "run",
        new_manifest("r", config, [task], backends={}, prompts={}, system_prompt="", isolation=""),
    )
    try:
        (result,) = run_trial(
            Trial(config, get_profile("off"), pool, store), [task], [backend], lambda record: None
        )
    finally:
        pool.close()
        store.close()
    assert [a.outcome for a in result.attempts] == [
        Outcome.ERROR,
        Outcome.ERROR,
        Outcome.PASSED,
    ]
    third = backend.requests[2]
    assert [m.role for m in third] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert [m.content for m in third if m.role == "assistant"][:2] == answers
    assert "Implement a basic reactive" in third[1].content
    assert "See the testing errors above" in third[3].content
    assert "value = 2" in third[5].content and "value = 1" not in third[5].content


def test_references_tasks_and_a_folder_of_exercises(tmp_path: Path) -> None:
    """`check --references` on the polyglot exercises (every reference passes, every
    stub fails, none is tampered), and on a folder of exercises passed as --suite PATH
    in which a stub already passes its tests."""
    checked = run_cli(
        "check", "--references", "--suite", "polyglot-python", "--data", POLYGLOT, "--workers", "2"
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("passed") == 34
    assert "tampered" not in checked.stdout  # no alarm on honest code, apart or beside
    suite = tmp_path / "mine"
    for name in ("react", "bowling"):
        shutil.copytree(POLYGLOT / "exercises" / name, suite / name)
    shutil.copy(suite / "bowling" / ".meta" / "example.py", suite / "bowling" / "bowling.py")
    listed = run_cli("tasks", "--suite", suite)
    assert listed.returncode == 0 and "edit react.py" in listed.stdout
    assert "trusted-side" in listed.stdout and "in-sandbox" not in listed.stdout
    toothless = run_cli("check", "--references", "--suite", suite)
    assert toothless.returncode == 1, toothless.stdout
    assert re.search(r"bowling\s.*passed\s.*passed", toothless.stdout), toothless.stdout


def test_commands_for_function_tasks_refuse_a_workspace_run(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"react.py": ["no edit"]}))
    made = run_cli(
        "run",
        "--model",
        f"scripted/{path}",
        "--suite",
        "polyglot-python",
        "--data",
        POLYGLOT,
        "--task",
        "react",
        "--tries",
        "1",
        "--runs-dir",
        tmp_path / "runs",
    )
    assert made.returncode == 0, made.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    for command in (["select", run_dir], ["judge-eval", run_dir, "--judge", "scripted"]):
        refused = run_cli(*command)
        assert refused.returncode == 2 and "takes function tasks" in refused.stderr


SUSPECT = "\nimport json\n\njson.dumps = json.dumps  # harmless, and a reach all the same\n"


def test_a_suspect_edit_is_recorded_and_counted_and_its_outcome_is_its_tests(
    exercises: dict[str, WorkspaceTask], tmp_path: Path
) -> None:
    """bowling's reference with a standard-library attribute assigned still passes,
    and the scan's finding is on the attempt, in each place that counts per model;
    wordy's reference has none."""
    bowling, wordy = exercises["bowling"], exercises["wordy"]
    ((_, example),) = bowling.reference
    response = f"bowling.py\n```python\n{_ends(example)}{SUSPECT}```\n"
    script = {"supplied files: bowling.py\n": [response]}
    script[f"supplied files: {wordy.files[0][0]}\n"] = [replay(wordy, "whole")]
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    runs = tmp_path / "runs"
    options = ["--suite", "polyglot-python", "--data", POLYGLOT, "--runs-dir", runs]
    ran = run_cli(
        "run", "--model", f"scripted/{path}", "--task", "bowling", "--task", "wordy", *options
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run_dir,) = runs.iterdir()
    data = results(run_dir)
    attempts = {t["task_id"]: t["attempts"] for t in data["tasks"]}
    assert [a["outcome"] for a in attempts["bowling"]] == ["passed"]
    assert [a["outcome"] for a in attempts["wordy"]] == ["passed"]
    line = _ends(example).count("\n") + 4
    assert attempts["bowling"][0]["suspects"] == [
        {
            "path": "bowling.py",
            "line": line,
            "rule": "S008",
            "message": "json.dumps assigned: a standard-library module changed",
            "text": "json.dumps = json.dumps  # harmless, and a reach all the same",
        }
    ]
    assert attempts["wordy"][0]["suspects"] == []
    (row,) = data["summary"]
    assert (row["first_pass"], row["suspect"], row["tampered"]) == (2, 1, 0)
    assert [(s["task_id"], s["attempt"], s["line"]) for s in data["suspects"]] == [
        ("bowling", 0, line)
    ]
    lines = ran.stdout.splitlines()
    header = next(x for x in lines if "tampered" in x)
    counts = next(x for x in lines[lines.index(header) :] if x.startswith("│ scripted/"))
    shown = dict(zip(header.split("┃")[1:-1], counts.split("│")[1:-1], strict=True))
    assert {k.strip(): v.strip() for k, v in shown.items()}["suspect"] == "1"
    report = (run_dir / "report.html").read_text()
    assert 'id="suspects"' in report and f"bowling.py:{line}" in report
    board = run_cli("board", run_dir, "--out", tmp_path / "board.html", "--json")
    assert board.returncode == 0, board.stderr
    (board_row,) = json.loads(board.stdout)["suites"]["polyglot-python"]
    assert (board_row["suspect"], board_row["tampered"]) == (1, 0)
