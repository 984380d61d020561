"""Public contest benchmarks read as their files are (LiveCodeBench, APPS,
CodeContests), their pickled cases read without running anything, and the release
window that selects problems by date."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import pickle
import shutil
import zlib
from datetime import date
from pathlib import Path

import pytest
from conftest import cli, fenced

import codetrial
from codetrial.errors import ConfigError, TaskFormatError
from codetrial.models.scripted import ScriptedBackend
from codetrial.tasks import load_suite
from codetrial.tasks.contests import _NoGlobals, plain_pickle

FIXTURES = Path(__file__).parent / "fixtures" / "contests"
LCB = FIXTURES / "livecodebench.jsonl"


def lcb_line(tmp_path: Path, **fields: object) -> Path:
    """The fixture's first problem with `fields` changed, as a file of its own."""
    record = json.loads(LCB.read_text().splitlines()[0]) | fields
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def packed(payload: bytes) -> str:
    return base64.b64encode(zlib.compress(payload)).decode()


def test_livecodebench_problems_keep_their_cases_dates_and_leave_out_functional_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        tasks = {t.id: t for t in load_suite("livecodebench", data=LCB)}
    assert sorted(tasks) == ["1801A", "abc901_a", "abc950_b"]
    assert "3 problems loaded, 1 functional (LeetCode) problems left out" in caplog.text
    add = tasks["abc901_a"]
    assert add.kind == "program" and add.suite == "livecodebench" and add.released == "2024-03-02"
    assert [(c.input, c.output) for c in add.samples] == [("3 4\n", "7\n")]
    assert [c.input for c in add.hidden] == ["1000000000 1000000000\n", "-5 2\n"]
    assert add.statement.startswith("# Add Two\n\nRead two integers")
    assert add.reference is None
    older = tasks["1801A"]  # an older release: private cases in plain JSON
    assert older.released == "2023-07-15" and len(older.hidden) == 3


class Payload:
    """A pickle that runs a shell command when loaded: it touches `target`."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.target}",)


def test_a_pickled_string_of_every_protocol_is_read_and_a_global_is_not_run(
    tmp_path: Path,
) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        text = json.dumps([{"input": "é 1\n", "output": "2\n", "testtype": "stdin"}])
        assert plain_pickle(pickle.dumps(text, protocol=protocol), "here") == text
    control, canary = tmp_path / "control", tmp_path / "canary"
    pickle.loads(pickle.dumps(Payload(control)))  # what such a pickle does when loaded
    assert control.exists()
    for protocol in (0, 2, pickle.HIGHEST_PROTOCOL):
        hostile = pickle.dumps(Payload(canary), protocol=protocol)
        path = lcb_line(tmp_path, private_test_cases=packed(hostile))
        with pytest.raises(TaskFormatError) as refused:
            load_suite("livecodebench", data=path)
        assert f"{path}:1: field 'private_test_cases'" in str(refused.value)
        assert "more than plain strings and numbers" in str(refused.value)
    assert not canary.exists()


def test_the_unpickler_alone_finds_no_global() -> None:
    """Past the opcode check, a global still finds nothing to build or call."""
    with pytest.raises(pickle.UnpicklingError, match=r"refers to posix\.system"):
        _NoGlobals(io.BytesIO(pickle.dumps(os.system))).load()


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"private_test_cases": "not base64 !"}, "neither JSON nor base64 of zlib data"),
        ({"private_test_cases": packed(pickle.dumps([1, 2]))}, "the pickle holds no JSON text"),
        ({"private_test_cases": packed(b"junk")}, "not a pickle of plain values"),
        ({"public_test_cases": "{}"}, "must be a list of test cases"),
        ({"contest_date": "March 2024"}, "field 'contest_date' is not an ISO date"),
        ({"question_title": 3}, "field 'question_title' is missing or not a string"),
    ],
)
def test_bad_livecodebench_lines_are_named(tmp_path: Path, fields: dict, says: str) -> None:
    path = lcb_line(tmp_path, **fields)
    with pytest.raises(TaskFormatError, match=f"^{path}:1: .*{says}"):
        load_suite("livecodebench", data=path)


@pytest.mark.parametrize("source", ["apps.jsonl", "apps"])
def test_apps_problems_from_the_jsonl_or_the_folder(
    source: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        (task,) = load_suite("apps", data=FIXTURES / source)
    assert "1 call-based problems (fn_name: see suite apps-calls) left out" in caplog.text
    assert task.id in ("apps/4000", "apps/0000") and task.released is None
    assert [c.input for c in task.samples] == ["3\n"]
    assert [c.output for c in task.hidden] == ["1\n", "500000000500000000\n"]
    assert task.reference == "n = int(input())\nprint(n * (n + 1) // 2)\n"


def test_apps_problems_published_without_solutions_or_cases_are_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """APPS publishes a problem's missing solutions or cases as an empty string, and
    a problem folder without them has no solutions.json or input_output.json."""
    first, calls = (json.loads(line) for line in (FIXTURES / "apps.jsonl").read_text().splitlines())
    records = [
        first,
        calls,
        first | {"problem_id": 4002, "solutions": ""},
        first | {"problem_id": 4003, "solutions": "", "input_output": ""},
        calls | {"problem_id": 4004, "input_output": ""},
    ]
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    folders = tmp_path / "folders"
    shutil.copytree(FIXTURES / "apps", folders)
    (folders / "0000" / "solutions.json").unlink()
    shutil.copytree(folders / "0000", folders / "0002")
    (folders / "0002" / "input_output.json").unlink()
    with caplog.at_level(logging.WARNING):
        jsonl = {t.id: t for t in load_suite("apps", data=path)}
        folder = {t.id: t for t in load_suite("apps", data=folders)}
        (double,) = load_suite("apps-calls", data=path)
    assert sorted(jsonl) == ["apps/4000", "apps/4002"] and jsonl["apps/4002"].reference is None
    assert jsonl["apps/4002"].hidden == jsonl["apps/4000"].hidden
    assert sorted(folder) == ["apps/0000"] and folder["apps/0000"].reference is None
    assert double.id == "apps/4001"
    said = "2 problems loaded, 1 call-based problems (fn_name: see suite apps-calls); "
    assert f"{said}2 problems without test cases left out" in caplog.text


@pytest.mark.parametrize("source", ["apps.jsonl", "apps"])
def test_apps_call_based_problems_are_function_tasks(
    source: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        (task,) = load_suite("apps-calls", data=FIXTURES / source)
    assert "1 problems that read standard input (see suite apps) left out" in caplog.text
    assert task.kind == "function" and task.harness == "check"
    assert task.signature.source == "def double(x):" and "double(2) => 4" in task.spec
    assert [t.visibility.value for t in task.tests] == ["visible", "hidden"]


def test_apps_call_arguments_are_data_however_they_look(tmp_path: Path) -> None:
    """Arguments and results that look like code reach the check as strings."""
    sneaky = "'); open('CANARY', 'w'); ('{}\n\"\"\""
    canary = tmp_path / "CANARY"
    path = tmp_path / "apps.jsonl"
    record = {
        "problem_id": 1,
        "question": "Return the text unchanged.",
        "solutions": json.dumps(["def echo(s):\n    return s\n"]),
        "input_output": json.dumps(
            {"fn_name": "echo", "inputs": [[sneaky], ["x"]], "outputs": [[sneaky], ["x"]]}
        ),
        "starter_code": "def echo(s):\n    ",
    }
    path.write_text(json.dumps(record) + "\n")
    (task,) = load_suite("apps-calls", data=path)
    judged = codetrial.judge("def echo(s):\n    return s\n", task)
    assert judged.outcome.value == "passed", judged.detail
    wrong = codetrial.judge("def echo(s):\n    return s + '!'\n", task)
    assert wrong.outcome.value == "failed" and "returned" in wrong.visible_output
    assert not canary.exists() and not Path("CANARY").exists()


def test_codecontests_problems_take_their_time_limit_and_a_python_3_reference(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        (task,) = load_suite("codecontests", data=FIXTURES / "codecontests.jsonl")
    assert "1 problems that read or write named files left out" in caplog.text
    assert task.id == "1003_A. Distinct Coins" and (task.cpu_s, task.wall_s) == (3, 9.0)
    assert len(task.samples) == 1 and len(task.hidden) == 3  # private and generated
    assert task.reference == "input()\nprint(len(set(input().split())))\n"


def test_a_suite_without_its_data_or_with_nothing_to_judge_says_so(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="needs --data PATH pointing at a LiveCodeBench"):
        load_suite("livecodebench")
    only_functional = tmp_path / "leetcode.jsonl"
    only_functional.write_text(LCB.read_text().splitlines()[2] + "\n")
    with pytest.raises(TaskFormatError, match=r"no problem this suite judges \(1 functional"):
        load_suite("livecodebench", data=only_functional)


def test_references_of_apps_and_codecontests_pass_in_the_sandbox() -> None:
    for suite, data in (
        ("apps", "apps"),
        ("apps-calls", "apps.jsonl"),
        ("codecontests", "codecontests.jsonl"),
    ):
        done = cli("check", "--references", "--suite", suite, "--data", FIXTURES / data)
        assert done.returncode == 0, done.stdout + done.stderr
        assert " passed " in done.stdout, done.stdout


def test_a_window_keeps_the_problems_released_in_it_and_is_recorded(tmp_path: Path) -> None:
    config, tasks = codetrial.configure("livecodebench", data=LCB, since="2024-01-01")
    assert [t.id for t in tasks] == ["abc901_a", "abc950_b"]
    assert (config.since, config.until) == (date(2024, 1, 1), None)
    _, tasks = codetrial.configure("livecodebench", data=LCB, until="2024-03-02")
    assert [t.id for t in tasks] == ["abc901_a", "1801A"]
    answer = "a, b = map(int, input().split())\nprint(a + b)\n"
    backend = ScriptedBackend({"Add Two": [fenced(answer)]}, "scripted/lcb")
    run = codetrial.run(
        "livecodebench",
        ["scripted/lcb"],
        data=LCB,
        since="2024-03-01",
        until="2024-03-31",
        runs_dir=tmp_path,
        name="window",
        backends={"scripted/lcb": backend},
    )
    (row,) = run.table()
    assert row["task_id"] == "abc901_a" and row["outcome"] == "passed"
    manifest = json.loads((run.path / "manifest.json").read_text())
    assert (manifest["config"]["since"], manifest["config"]["until"]) == (
        "2024-03-01",
        "2024-03-31",
    )


@pytest.mark.parametrize(
    ("suite", "window", "says"),
    [
        ("programs", {"since": "2024-01-01"}, "suite 'programs' has 30 without one"),
        ("livecodebench", {"since": "2026-01-01"}, "released from 2023-07-15 to 2025-02-01"),
        ("livecodebench", {"until": "2024-13-01"}, "--until takes an ISO date"),
    ],
)
def test_a_window_that_cannot_select_says_why(suite: str, window: dict, says: str) -> None:
    data = LCB if suite == "livecodebench" else None
    with pytest.raises(ConfigError, match=says):
        codetrial.configure(suite, data=data, **window)


def test_the_report_gives_pass_at_1_per_month_of_release(tmp_path: Path) -> None:
    solved = "a, b = map(int, input().split())\nprint(a + b)\n"
    backend = ScriptedBackend(
        {"Add Two": [fenced(solved)], "Reverse": [fenced("print(0)")], "Largest": [fenced("x")]},
        "scripted/lcb",
    )
    run = codetrial.run(
        "livecodebench",
        ["scripted/lcb"],
        data=LCB,
        repair_attempts=0,
        runs_dir=tmp_path,
        name="months",
        backends={"scripted/lcb": backend},
    )
    assert run.manifest.released == {
        "abc901_a": "2024-03-02",
        "1801A": "2023-07-15",
        "abc950_b": "2025-02-01",
    }
    months = json.loads((run.path / "results.json").read_text())["by_release_month"]
    assert [(m["month"], m["first"]["value"], m["first"]["tasks"]) for m in months] == [
        ("2023-07", 0.0, 1),
        ("2024-03", 1.0, 1),
        ("2025-02", 0.0, 1),
    ]
    report = (run.path / "report.html").read_text()
    assert "pass@1 by month of release" in report and "2024-03" in report
    assert "chart-by-release-month" in report


def test_the_command_line_says_what_is_wrong_without_a_traceback(tmp_path: Path) -> None:
    hostile = lcb_line(tmp_path, private_test_cases=packed(pickle.dumps(Payload(tmp_path / "x"))))
    for args, code, says in (
        (("--data", LCB, "--since", "2024-13-01"), 2, "--since takes an ISO date"),
        (("--data", hostile), 3, "it is refused unread"),
        (("--data", tmp_path / "absent.jsonl"), 3, "does not exist"),
    ):
        done = cli("run", "--suite", "livecodebench", *args, "--runs-dir", tmp_path)
        said = " ".join(done.stderr.split())
        assert done.returncode == code and says in said, said
        assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "x").exists()
