"""The `codetrial` command as a user runs it: real subprocesses, real files."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from rich.text import Text

from codetrial.cli import build_app
from codetrial.tasks import Task
from tests.conftest import CLI_ENV, CODETRIAL, FIXTURES, POLYGLOT, cli, fenced, write_task


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr


def test_tasks_lists_the_suite() -> None:
    result = cli("tasks")
    assert result.returncode == 0
    assert "merge_intervals" in result.stdout and "shortest_path_grid" in result.stdout


def test_tasks_lists_a_data_file_suite_and_says_when_the_file_is_missing() -> None:
    listed = cli("tasks", "--suite", "mbpp+", "--data", FIXTURES / "benchmarks" / "MbppPlus.jsonl")
    assert listed.returncode == 0 and "Mbpp/" in listed.stdout
    missing = cli("tasks", "--suite", "mbpp+")
    assert missing.returncode != 0 and "--data PATH" in missing.stderr
    _no_traceback(missing)


def test_models_lists_backends() -> None:
    result = cli("models", "--ollama-url", "http://127.0.0.1:9")
    assert result.returncode == 0, result.stderr
    for name in ("embedded", "ollama/<tag>", "openai/<model>", "scripted/<script.json>"):
        assert name in result.stdout


def test_check_passes_a_reference_and_fails_a_wrong_variant(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    reference = tmp_path / "ref.py"
    reference.write_text(contracts10["merge_intervals"].reference or "")
    good = cli("check", reference, "--task", "merge_intervals")
    assert good.returncode == 0 and "passed" in good.stdout
    wrong = FIXTURES / "wrong" / "merge_intervals" / "mutates_input.py"
    bad = cli("check", wrong, "--task", "merge_intervals")
    assert bad.returncode == 1 and "failed" in bad.stdout
    assert "test_does_not_mutate_input" in bad.stdout


def test_unknown_model_lists_known_forms(tmp_path: Path) -> None:
    result = cli("run", "--model", "gpt-17", "--runs-dir", tmp_path)
    assert result.returncode == 2
    assert "unknown model 'gpt-17'" in result.stderr and "ollama/<tag>" in result.stderr
    _no_traceback(result)


def test_a_run_of_no_task_or_no_time_is_refused(tmp_path: Path) -> None:
    for option, value, message in (("--limit", "0", "--limit must be at least 1"),
                                   ("--timeout", "0", "--timeout must be above 0 seconds"),
                                   ("--tries", "0", "--tries must be at least 1")):  # fmt: skip
        result = cli("run", "--model", "scripted", option, value, "--runs-dir", tmp_path)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        _no_traceback(result)
    assert not list(tmp_path.iterdir())


def test_unknown_task_and_suite(tmp_path: Path) -> None:
    result = cli("run", "--model", "scripted/x.json", "--task", "nope", "--runs-dir", tmp_path)
    assert result.returncode != 0 and "unknown task nope" in result.stderr
    result = cli("tasks", "--suite", "nonesuch")
    assert result.returncode == 3 and "contracts10" in result.stderr
    _no_traceback(result)


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (None, "no spec.md"),
        ("# T\n\nNo signature here.\n", "field 'signature'"),
        ("# T\n\n```python\nx = 1\n```\n", "field 'signature'"),
    ],
)
def test_malformed_task_folder_names_path_and_field(
    tmp_path: Path, spec: str | None, field: str
) -> None:
    folder = tmp_path / "suite" / "broken"
    folder.mkdir(parents=True)
    (folder / "test_visible.py").write_text("def test_x():\n    pass\n")
    if spec is not None:
        (folder / "spec.md").write_text(spec)
    result = cli("tasks", "--suite", tmp_path / "suite")
    assert result.returncode == 3
    assert str(folder) in result.stderr.replace("\n", "") and field in result.stderr
    _no_traceback(result)


def test_unreadable_scripted_file(tmp_path: Path) -> None:
    result = cli("run", "--model", f"scripted/{tmp_path / 'missing.json'}", "--runs-dir", tmp_path)
    assert result.returncode == 2 and "cannot read a JSON script" in result.stderr
    _no_traceback(result)


def test_run_user_suite_then_rebuild_report(tmp_path: Path) -> None:
    write_task(
        tmp_path / "suite" / "double",
        "def double(x: int) -> int:",
        "from candidate import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"double": [fenced("def double(x):\n    return 2 * x\n")]}))
    runs = tmp_path / "runs"
    result = cli(
        "run", "--model", f"scripted/{script}", "--suite", tmp_path / "suite", "--runs-dir", runs
    )
    assert result.returncode == 0, result.stderr
    assert "1/1" in result.stdout and "report.html" in result.stdout
    (run_dir,) = runs.iterdir()
    report = run_dir / "report.html"
    first = report.read_text()
    report.unlink()
    rebuilt = cli("report", run_dir)
    assert rebuilt.returncode == 0 and report.read_text() == first
    assert cli("report", tmp_path).returncode == 7


def _script_for(task: Task, folder: Path) -> Path:
    script = folder / "script.json"
    script.write_text(json.dumps({task.entry_point: [fenced(task.reference or "")]}))
    return script


def test_unsafe_host_exec_is_recorded_and_shown(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    script = _script_for(contracts10["palindrome"], tmp_path)
    result = cli(
        "run",
        "--model",
        f"scripted/{script}",
        "--task",
        "palindrome",
        "--runs-dir",
        tmp_path / "runs",
        "--unsafe-host-exec",
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["isolation"].startswith("host+")
    assert manifest["config"]["unsafe_host_exec"] is True
    assert 'id="unsafe-banner"' in (run_dir / "report.html").read_text()


def test_refuses_to_execute_without_namespaces(tmp_path: Path) -> None:
    """Inside a user namespace that may not nest another, no sandbox can start."""
    from codetrial.sandbox.launch import find_bwrap

    wrong = FIXTURES / "wrong" / "merge_intervals" / "mutates_input.py"
    jail = [str(find_bwrap().path), "--unshare-user", "--disable-userns", "--dev-bind", "/", "/"]
    args = [CODETRIAL, "check", str(wrong), "--task", "merge_intervals"]
    refused = subprocess.run([*jail, *args], capture_output=True, text=True, env=CLI_ENV)
    assert refused.returncode == 6
    assert "--unsafe-host-exec" in refused.stderr and "namespaces" in refused.stderr
    _no_traceback(refused)
    allowed = subprocess.run(
        [*jail, *args, "--unsafe-host-exec"], capture_output=True, text=True, env=CLI_ENV
    )
    assert allowed.returncode == 1 and "isolation: host" in allowed.stdout


@pytest.mark.parametrize(
    ("test_source", "message"),
    [
        ("from candidate import double\n\ndef test_x(:\n    pass\n",
         r"test_visible\.py, line 3: not valid Python"),
        ("def test_x():\n    assert True\n",
         r"test_visible\.py: never imports the function under test; "
         r"add `from candidate import double`"),
    ],
)  # fmt: skip
def test_a_broken_test_file_is_the_task_s_fault_and_stops_before_any_model_call(
    tmp_path: Path, test_source: str, message: str
) -> None:
    write_task(tmp_path / "suite" / "double", "def double(x: int) -> int:", test_source)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"double": [fenced("def double(x):\n    return 2 * x\n")]}))
    runs = tmp_path / "runs"
    result = cli(
        "run", "--model", f"scripted/{script}", "--suite", tmp_path / "suite", "--runs-dir", runs
    )
    assert result.returncode == 3
    assert re.search(message, result.stderr.replace("\n", "")), result.stderr
    assert not runs.exists()
    _no_traceback(result)


def test_a_benchmark_record_with_unparsable_code_names_the_line_and_field(tmp_path: Path) -> None:
    plus = FIXTURES / "benchmarks" / "HumanEvalPlus.jsonl"
    record = json.loads(plus.read_text().splitlines()[0])
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(record | {"test": "def check(candidate):\n    assert (\n"}) + "\n")
    result = cli("tasks", "--suite", "humaneval+", "--data", broken)
    assert result.returncode == 3
    stderr = result.stderr.replace("\n", "")
    assert "broken.jsonl:1: field 'test', line 2: not valid Python" in stderr
    mbpp = json.loads((FIXTURES / "benchmarks" / "mbpp.jsonl").read_text().splitlines()[0])
    broken.write_text(json.dumps(mbpp | {"code": "def f(:\n"}) + "\n")
    result = cli("tasks", "--suite", "mbpp", "--data", broken)
    assert result.returncode == 3 and "field 'code', line 1: not valid Python" in result.stderr
    _no_traceback(result)


def test_check_reads_a_model_response_as_run_does(tmp_path: Path) -> None:
    """The fenced block is extracted, --data names the suite's file, the suite's own
    gate profile applies (humaneval+ imports are fine: its profile is `off`), and the
    isolation label is the one a run's manifest records."""
    response = tmp_path / "response.txt"
    response.write_text(
        "Sure! Here it is:\n\n"
        + fenced("import itertools\n\ndef add_one(xs):\n    return [x + 1 for x in xs]\n")
        + "\nThis adds one to each element."
    )
    data = FIXTURES / "benchmarks" / "HumanEvalPlus.jsonl"
    result = cli(
        "check", response, "--task", "HumanEval/0", "--suite", "humaneval+", "--data", data
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"isolation: bwrap\+seccomp\+\S*rlimits\s+gate: off", result.stdout)
    strict = cli(
        "check",
        response,
        "--task",
        "HumanEval/0",
        "--suite",
        "humaneval+",
        "--data",
        data,
        "--gate",
        "builtins-only",
    )
    assert strict.returncode == 1 and "rejected" in strict.stdout and "G001" in strict.stdout


def test_check_extracts_a_benchmark_response_as_its_prompt_profile_does(tmp_path: Path) -> None:
    """By default a benchmark task's response is judged by its definitions alone, as a
    run under the default profile judges it: a wrong example call after the function
    fails it only under `--prompt-profile codetrial`, which runs all of its code."""
    response = tmp_path / "response.txt"
    response.write_text(
        fenced("def add_one(xs):\n    return [x + 1 for x in xs]\n\nassert add_one([1]) == [3]\n")
    )
    data = FIXTURES / "benchmarks" / "HumanEvalPlus.jsonl"
    where = ("--task", "HumanEval/0", "--suite", "humaneval+", "--data", data)
    default = cli("check", response, *where)
    assert default.returncode == 0, default.stdout + default.stderr
    whole = cli("check", response, *where, "--prompt-profile", "codetrial")
    assert whole.returncode == 1 and "AssertionError" in whole.stdout
    for wrong, message in [
        (("--references", "--suite", "humaneval+", "--data", data, "--prompt-profile",
          "codetrial"), "--prompt-profile is for a FILE"),
        ((response, "--task", "two_sum", "--prompt-profile", "codetrial"),
         "--prompt-profile is for benchmark tasks"),
        ((response, *where, "--prompt-profile", "evalplus"), "unknown prompt profile"),
    ]:  # fmt: skip
        result = cli("check", *wrong)
        assert result.returncode == 2 and message in " ".join(result.stderr.split())
        _no_traceback(result)


def test_every_help_text_shows_as_written() -> None:
    """Help is rendered as rich markup, where an unescaped [word] is a style and
    vanishes: `pip install 'codetrial[ray]'` would read as `pip install 'codetrial'`."""

    def texts(command: Any) -> Iterator[str]:
        yield command.help or ""
        yield from (getattr(p, "help", None) or "" for p in command.params)
        for sub in getattr(command, "commands", {}).values():
            yield from texts(sub)

    found = list(texts(typer.main.get_command(build_app())))
    assert len(found) > 100
    for text in found:
        assert Text.from_markup(text).plain == text.replace("\\[", "["), text


def test_check_references_finds_tests_that_catch_nothing_and_tests_that_flip(
    tmp_path: Path,
) -> None:
    """Trivial bodies the tests pass, and a test whose outcome changes from one run of
    the reference to the next (this one counts its runs in a file and fails every
    second one: the reference's first run passes, the next of its runs fails)."""
    suite = tmp_path / "weak"
    tasks = {
        "first": ("def first(items, default=None):", "return items[0] if items else default",
                  "def test_empty():\n    assert first([]) is None\n"),
        "double": ("def double(x):", "return 2 * x",
                   f"def test_double():\n"
                   f"    with open({str(tmp_path / 'runs')!r}, 'a+') as runs:\n"
                   f"        runs.write('x')\n        odd = runs.tell() % 2\n"
                   f"    assert double(2) == 4 and odd\n"),
        "negate": ("def negate(x):", "return -x",
                   "def test_negate():\n    assert negate(3) == -3\n"),
    }  # fmt: skip
    for name, (signature, body, tests) in tasks.items():
        folder = write_task(suite / name, signature, f"from candidate import {name}\n\n{tests}")
        (folder / "reference.py").write_text(f"{signature}\n    {body}\n")
    result = cli("check", "--references", "--suite", suite, env={**CLI_ENV, "COLUMNS": "200"})
    assert result.returncode == 1, result.stdout + result.stderr
    rows = {
        cells[0]: cells[1:]
        for line in result.stdout.splitlines()
        if len(cells := [c.strip() for c in line.split("│")[1:-1]]) == 5
    }
    assert rows["first"] == ["passed", "", "pass, return None", ""]
    assert rows["double"] == ["passed", "", "", "test_double"]
    assert rows["negate"] == ["passed", "", "", ""]


def _column(output: str, index: int) -> str:
    """The text of a table's column `index`, its folded lines joined."""
    cells = [re.split("[│┃]", line) for line in output.splitlines()]
    return "".join(c[index + 1].strip() for c in cells if len(c) > index + 1)


@pytest.mark.parametrize("columns", ["80", "60"])
def test_ids_are_never_cut_in_narrow_or_piped_output(
    tmp_path: Path, contracts10: dict[str, Task], columns: str
) -> None:
    """A user copies ids and model names from the tables, and scripts read them."""
    narrow = {**CLI_ENV, "COLUMNS": columns}
    listed = cli("tasks", env=narrow)
    assert listed.returncode == 0, listed.stderr
    for task_id in contracts10:
        assert task_id in listed.stdout
    polyglot = cli("tasks", "--suite", "polyglot-python", "--data", POLYGLOT, env=narrow)
    assert polyglot.returncode == 0, polyglot.stderr
    assert "variable-length-quantity" in polyglot.stdout and "…" not in _column(polyglot.stdout, 0)
    ids = ["merge_intervals", "longest_common_prefix"]
    model = "qwen2.5-coder-7b-instruct-q4_k_m.json"
    (tmp_path / model).write_text(
        json.dumps(
            {contracts10[i].entry_point: [fenced(contracts10[i].reference or "")] for i in ids}
        )
    )
    args = ("run", "--model", f"scripted/{model}", "--task", ids[0], "--task", ids[1])
    result = cli(*args, "--runs-dir", "runs", cwd=tmp_path, env=narrow)
    assert result.returncode == 0, result.stderr
    matrix, rest = result.stdout.split("Results", 1)
    results = rest.split("pass@k", 1)[0]
    assert all(task_id in matrix for task_id in ids)
    assert f"scripted/{model}" in _column(matrix, 1)
    assert f"scripted/{model}" in _column(results, 0)
