"""Workspace tasks: the aider polyglot Python exercises, judged by their own tests in
the sandbox, and what a candidate sharing the tests' process can and cannot do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import TaskFormatError
from codetrial.records import AttemptRecord, Outcome, TaskResult, Visibility
from codetrial.report.summary import edit_summaries
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks.model import TestFile
from codetrial.tasks.workspace import WorkspaceTask, load_exercism
from codetrial.verdict.workspace import apply_edit, expected_tests, judge_workspace, trimmed
from tests.conftest import POLYGLOT

LIMITS = Limits(timeout_s=60, cpu_s=30)


@pytest.fixture(scope="module")
def exercises() -> dict[str, WorkspaceTask]:
    return {task.id: task for task in load_exercism(POLYGLOT, "polyglot-python")}


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    sandbox = open_sandbox(SandboxPolicy(LIMITS))
    yield sandbox
    sandbox.close()


def test_the_34_exercises_load_with_their_files(exercises: dict[str, WorkspaceTask]) -> None:
    assert len(exercises) == 34
    paasio = exercises["paasio"]
    assert paasio.editable == ("paasio.py",)
    assert sorted(paasio.test_sources) == ["paasio_test.py", "test_utils.py"]
    assert "Report network IO statistics" in paasio.instructions
    assert all(task.reference and task.instructions for task in exercises.values())


def test_an_exception_from_the_candidate_s_code_reads_with_its_frames(
    exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    """Judged apart, a test's trace shows the test's frames and, under the exception,
    the candidate's frames where it was raised: the protocol's own frames are left
    out, so the model reads the report it would read from a run in one process."""
    task = exercises["list-ops"]
    stub = dict(task.files)["list_ops.py"]
    raises = "def length(list):\n    raise ValueError('not today')"
    solution = stub.replace("def length(list):\n    pass", raises)
    verdict = judge_workspace({"list_ops.py": solution}, task, box, LIMITS)
    assert verdict.outcome is Outcome.FAILED  # the other functions' assertions fail
    failure = verdict.visible_output.split("FAILED list_ops_test.py::ListOpsTest::test_length_")[1]
    assert 'File "list_ops_test.py", line' in failure
    assert "ValueError: not today\nraised in the candidate's code, at:\n" in failure
    assert 'File "list_ops.py", line 14, in length' in failure
    assert "remote.py" not in verdict.visible_output


def test_every_reference_passes_and_every_stub_fails(
    exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    """The tasks have teeth: each example solution, placed as the solution file,
    passes every test; each untouched stub fails. Every exercise but paasio (whose
    tests read their callers' frames) is judged with its tests apart from the
    candidate's files, and each test's outcome there is the one it has beside them."""
    assert [t.id for t in exercises.values() if t.trust != "trusted-side"] == ["paasio"]
    for task in exercises.values():
        for files, passes in ((dict(task.reference), True), ({}, False)):
            verdict = judge_workspace(files, task, box, LIMITS)
            shown = f"{task.id}: {verdict.detail}\n{verdict.visible_output}"
            assert (verdict.outcome is Outcome.PASSED) is passes, shown
            if passes:
                assert len(verdict.tests) == len(expected_tests(task.test_sources))
            if task.trust == "trusted-side":
                beside = judge_workspace(files, task, box, LIMITS, beside=True)
                assert verdict.outcome is beside.outcome, shown
                assert [(t.name, t.outcome, t.exception_type) for t in verdict.tests] == [
                    (t.name, t.outcome, t.exception_type) for t in beside.tests
                ], shown


def test_a_failure_reads_like_a_test_report_with_workspace_paths(
    exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    task = exercises["react"]
    verdict = judge_workspace(dict(task.files), task, box, LIMITS)
    assert verdict.outcome is Outcome.FAILED
    assert "FAILED react_test.py::ReactTest::test_compute_cells_calculate_initial_value" in (
        verdict.visible_output
    )
    assert 'File "react_test.py", line' in verdict.visible_output
    assert "/scratch" not in verdict.visible_output
    assert verdict.visible_output.endswith("failed")
    assert verdict.feedback is not None


def exercise(root: Path, tests: dict[str, str]) -> None:
    """An exercise folder whose solution is a.py, with these test files."""
    folder = root / "a"
    (folder / ".meta").mkdir(parents=True)
    (folder / ".docs").mkdir()
    (folder / ".docs" / "instructions.md").write_text("Do it.\n")
    files = {"solution": ["a.py"], "test": list(tests), "example": [".meta/e.py"]}
    (folder / ".meta" / "config.json").write_text(json.dumps({"files": files}))
    (folder / "a.py").write_text("")
    for name, source in tests.items():
        (folder / name).write_text(source)


def test_a_task_whose_test_file_does_not_parse_is_named(tmp_path: Path) -> None:
    exercise(tmp_path, {"a_test.py": "def test_x(:\n"})
    with pytest.raises(TaskFormatError, match=r"a_test\.py, line 1: not valid Python"):
        load_exercism(tmp_path, "mine")


def _lines(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _search_replace(path: str, old: str, new: str) -> str:
    return (
        f"{path}\n```python\n<<<<<<< SEARCH\n{_lines(old)}=======\n{_lines(new)}"
        ">>>>>>> REPLACE\n```\n"
    )


@pytest.mark.parametrize(
    ("name", "response", "kind"),
    [
        ("whole", "I would rather not.", "no_edit"),
        ("whole", "react_test.py\n```python\ndef test_x():\n    pass\n```\n", "forbidden_path"),
        ("diff", "react.py\n```python\n<<<<<<< SEARCH\nclass Nope:\n=======\nx = 1\n"
                 ">>>>>>> REPLACE\n```\n", "no_match"),
        ("udiff", "```diff\n--- a/react.py\n+++ b/react.py\n@@ -1,2 +1,2 @@\n-class Nope:\n"
                  "+class Yes:\n```\n", "no_match"),
    ],
)  # fmt: skip
def test_a_response_that_cannot_be_applied_is_a_malformed_edit(
    name: str, response: str, kind: str, exercises: dict[str, WorkspaceTask]
) -> None:
    task = exercises["react"]
    workspace, verdict = apply_edit(response, task, EDIT_FORMATS.get(name))
    assert verdict is not None and verdict.outcome is Outcome.MALFORMED_EDIT
    assert f"The edit could not be applied ({kind})" in verdict.detail
    assert verdict.feedback == verdict.detail
    assert workspace == dict(task.files)


def test_a_second_try_edits_what_the_first_left(
    exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    task = exercises["react"]
    ((path, stub),) = task.files
    ((_, example),) = task.reference
    half = stub.replace("self.value = None", "self.value = initial_value", 1)
    first = _search_replace(path, stub, half)
    second = _search_replace(path, half, example)
    diff = EDIT_FORMATS.get("diff")
    workspace, malformed = apply_edit(first, task, diff)
    assert malformed is None and "initial_value" in workspace[path]
    assert judge_workspace(workspace, task, box, LIMITS).outcome is Outcome.FAILED
    workspace, malformed = apply_edit(second, task, diff, workspace)
    assert malformed is None and workspace[path].rstrip() == example.rstrip()
    assert judge_workspace(workspace, task, box, LIMITS).outcome is Outcome.PASSED


def test_the_runner_collects_what_the_trusted_side_expects(box: Sandbox, tmp_path: Path) -> None:
    """A helper imported into a test file, or a test* function that takes arguments
    (positional-only ones too), is no test on either side; a mixin's test methods are
    tests of the TestCase that inherits them, on both sides: such a task passes when
    its code is right."""
    tests = {
        "helpers.py": "def test_helper(x):\n    return x\n",
        "a_test.py": (
            "import unittest\nfrom helpers import test_helper\nfrom a import f\n\n"
            "def test_with_args(value):\n    pass\n\n"
            "def test_positional_only(value, /):\n    pass\n\n"
            "def test_f():\n    assert f() == 1\n\n"
            "class Shared:\n    def test_shared(self):\n        assert f() == 1\n\n"
            "class FTest(Shared, unittest.TestCase):\n    def test_own(self):\n        pass\n"
        ),
    }
    files = tuple(TestFile(name, source, Visibility.VISIBLE) for name, source in tests.items())
    task = WorkspaceTask("a", "mine", "Do it.", (("a.py", ""),), ("a.py",), files)
    assert expected_tests(tests) == {
        "a_test.py::test_f",
        "a_test.py::FTest::test_own",
        "a_test.py::FTest::test_shared",
    }
    verdict = judge_workspace({"a.py": "def f():\n    return 1\n"}, task, box, LIMITS)
    assert verdict.outcome is Outcome.PASSED, verdict.visible_output


def test_the_runner_collects_the_tests_pytest_collects(
    exercises: dict[str, WorkspaceTask], tmp_path: Path
) -> None:
    """aider runs pytest on each exercise; codetrial's runner must run the same tests."""
    for task in exercises.values():
        for path, text in (dict(task.files) | dict(task.reference) | task.test_sources).items():
            (tmp_path / task.id / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / task.id / path).write_text(text)
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            os.devnull,
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    node_ids = {line for line in collected.stdout.splitlines() if "::" in line}
    ours = {
        f"{task.id}/{record}"
        for task in exercises.values()
        for record in expected_tests(task.test_sources)
    }
    assert len(ours) > 500
    assert node_ids == ours


def test_a_test_case_built_on_another_test_file_s_class_is_refused(tmp_path: Path) -> None:
    base = (
        "import unittest\n\nclass Base(unittest.TestCase):\n    def test_one(self):\n        pass\n"
    )
    inherits = "from base import Base\n\nclass ATest(Base):\n    pass\n"
    exercise(tmp_path, {"a_test.py": inherits, "base.py": base})
    with pytest.raises(TaskFormatError, match=r"a_test\.py, line 3: class ATest derives from Base"):
        load_exercism(tmp_path, "mine")


def test_long_test_output_keeps_the_first_failures_and_the_count() -> None:
    failures = "\n".join(f"FAILED a_test.py::test_{n}\nAssertionError: {n}" for n in range(500))
    shown = trimmed(failures, "3 passed, 500 failed", limit=1000)
    assert len(shown) <= 1000
    assert shown.startswith("FAILED a_test.py::test_0\n")
    lines = len(shown.splitlines()) - 2
    assert shown.endswith(f"\n... (cut: {lines} of 1000 lines shown)\n3 passed, 500 failed")
    assert trimmed("FAILED a_test.py::test_0", "0 passed, 1 failed") == (
        "FAILED a_test.py::test_0\n0 passed, 1 failed"
    )
    one_long_line = trimmed("x" * 5000, "0 passed, 1 failed", limit=1000)
    assert len(one_long_line) <= 1000 and one_long_line.startswith("xxx")
    assert one_long_line.endswith("... (cut: 0 of 1 lines shown)\n0 passed, 1 failed")


def test_files_that_do_not_compile_are_a_syntax_error_found_without_running(
    exercises: dict[str, WorkspaceTask],
) -> None:
    task = exercises["react"]
    indented = {"react.py": "class InputCell:\n    pass\n  x = 1\n"}
    verdict = judge_workspace(indented, task, None, LIMITS)  # type: ignore[arg-type]
    assert verdict.outcome is Outcome.SYNTAX_ERROR
    assert verdict.detail.startswith("IndentationError: unindent does not match")
    assert "(react.py, line 3)" in verdict.feedback


def test_tab_and_indentation_errors_count_as_aider_counts_them(
    exercises: dict[str, WorkspaceTask],
) -> None:
    task = exercises["react"]
    broken = {
        "syntax": "class InputCell(:\n    pass\n",
        "indentation": "class InputCell:\npass\n",
        "tab": "class InputCell:\n    if True:\n\tpass\n        pass\n",
    }
    details = {
        kind: judge_workspace({"react.py": text}, task, None, LIMITS).detail  # type: ignore[arg-type]
        for kind, text in broken.items()
    }
    assert details["tab"].startswith("TabError:"), details
    records = [
        AttemptRecord(
            model="m",
            task_id=kind,
            attempt=0,
            raw_response="",
            code=None,
            outcome=Outcome.SYNTAX_ERROR,
            detail=detail,
            files={},
        )
        for kind, detail in details.items()
    ]
    results = [TaskResult("m", r.task_id, 0, r) for r in records]
    (summary,) = edit_summaries(results, ["m"], set(broken), "whole", 2)
    assert (summary.syntax_errors, summary.indentation_errors) == (1, 2)
    assert summary.well_formed == 1.0 and [e.value for e in summary.pass_after_try] == [0, 0]
