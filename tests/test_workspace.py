"""Workspace tasks: the aider polyglot Python exercises, judged by their own tests in
the sandbox, and what a candidate sharing the tests' process can and cannot do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import TaskFormatError
from codetrial.records import Outcome, Visibility
from codetrial.sandbox import Sandbox, open_sandbox
from codetrial.tasks.model import TestFile
from codetrial.tasks.workspace import WorkspaceTask, load_exercism
from codetrial.verdict.workspace import expected_tests, judge_edit, judge_workspace
from tests.conftest import POLYGLOT

LIMITS = Limits(timeout_s=60, cpu_s=30)


@pytest.fixture(scope="module")
def exercises() -> dict[str, WorkspaceTask]:
    return {task.id: task for task in load_exercism(POLYGLOT, "polyglot-python")}


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    sandbox = open_sandbox(LIMITS)
    yield sandbox
    sandbox.close()


def test_the_34_exercises_load_with_their_files(exercises: dict[str, WorkspaceTask]) -> None:
    assert len(exercises) == 34
    paasio = exercises["paasio"]
    assert paasio.editable == ("paasio.py",)
    assert sorted(paasio.test_sources) == ["paasio_test.py", "test_utils.py"]
    assert "Report network IO statistics" in paasio.instructions
    assert all(task.reference and task.instructions for task in exercises.values())


def test_every_reference_passes_and_every_stub_fails(
    exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    """The tasks have teeth: each example solution, placed as the solution file,
    passes every test; each untouched stub fails."""
    for task in exercises.values():
        reference = judge_workspace(dict(task.files) | dict(task.reference), task, box, LIMITS)
        assert reference.outcome is Outcome.PASSED, (task.id, reference.visible_output)
        assert len(reference.tests) == len(expected_tests(task.test_sources))
        stub = judge_workspace(dict(task.files), task, box, LIMITS)
        assert stub.outcome is not Outcome.PASSED, task.id


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


def test_a_task_whose_test_file_does_not_parse_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    (folder / ".meta").mkdir(parents=True)
    (folder / ".docs").mkdir()
    (folder / ".docs" / "instructions.md").write_text("Do it.\n")
    (folder / ".meta" / "config.json").write_text(
        '{"files": {"solution": ["a.py"], "test": ["a_test.py"], "example": [".meta/e.py"]}}'
    )
    (folder / "a.py").write_text("")
    (folder / "a_test.py").write_text("def test_x(:\n")
    with pytest.raises(TaskFormatError, match=r"a_test\.py, line 1: not valid Python"):
        load_exercism(tmp_path, "mine")


STUB_ATTACKS = {
    "exits_0_at_import": ("import os\nos._exit(0)\n", Outcome.ERROR, "did not finish"),
    "sys_exit_at_import": ("import sys\nsys.exit(0)\n", Outcome.ERROR, "failed to import"),
    "atexit_exits_0": (
        "import atexit, os\natexit.register(lambda: os._exit(0))\n",
        Outcome.FAILED, "failed",
    ),
    "patches_unittest": (
        "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "unittest.TestCase.assertIs = lambda *a, **k: None\n",
        Outcome.ERROR, "changed the test machinery",
    ),
    "patches_builtins": (
        "import builtins\nbuiltins.AssertionError = type('Never', (Exception,), {})\n",
        Outcome.FAILED, "changed the test machinery",
    ),
    "writes_conftest_and_pytest_ini": (
        "open('conftest.py', 'w').write('import pytest\\n')\n"
        "open('pytest.ini', 'w').write('[pytest]\\naddopts = -p no:python\\n')\n",
        Outcome.FAILED, "failed",
    ),
    "replaces_the_test_file": (
        "open('react_test.py', 'w').write('def test_nothing():\\n    pass\\n')\n",
        Outcome.FAILED, "failed",
    ),
    "prints_a_fake_summary": (
        "print('=================== 14 passed in 0.01s ===================')\n",
        Outcome.FAILED, "failed",
    ),
    "closes_the_reporter": ("import os\nos.close(11)\n", Outcome.ERROR, "did not finish"),
    "kills_its_process": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
                          Outcome.ERROR, "signal 9"),
    "writes_unsigned_records": (
        "import json, os\n"
        "for name in ('test_input_cells_have_a_value',):\n"
        "    os.write(11, (json.dumps({'test': 'react_test.py::ReactTest::' + name,\n"
        "                              'outcome': 'passed'}) + '\\n').encode())\n"
        "os.write(11, b'{\"end\": 14}\\n')\nos._exit(0)\n",
        Outcome.ERROR, "not this run's",
    ),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(STUB_ATTACKS))
def test_a_stub_with_an_attack_does_not_pass(
    attack: str, exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    code, outcome, evidence = STUB_ATTACKS[attack]
    task = exercises["react"]
    files = {"react.py": code + dict(task.files)["react.py"]}
    verdict = judge_workspace(files, task, box, LIMITS)
    shown = f"{verdict.detail}\n{verdict.visible_output}"
    assert verdict.outcome is outcome, shown
    assert evidence in shown, shown


def _lines(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _search_replace(path: str, old: str, new: str) -> str:
    return (
        f"{path}\n```python\n<<<<<<< SEARCH\n{_lines(old)}=======\n{_lines(new)}"
        ">>>>>>> REPLACE\n```\n"
    )


@pytest.mark.parametrize("name", ["whole", "diff"])
def test_a_response_replaying_the_reference_passes_in_each_format(
    name: str, exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    edit_format = EDIT_FORMATS.get(name)
    for task in exercises.values():
        ((path, stub),) = task.files
        ((_, example),) = task.reference
        response = (
            f"{path}\n```python\n{_lines(example)}```\n"
            if name == "whole"
            else _search_replace(path, stub, example)
        )
        verdict, workspace = judge_edit(response, task, edit_format, box, LIMITS)
        assert verdict.outcome is Outcome.PASSED, (task.id, verdict.detail)
        assert workspace[path].rstrip() == example.rstrip()


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
    name: str, response: str, kind: str, exercises: dict[str, WorkspaceTask], box: Sandbox
) -> None:
    task = exercises["react"]
    verdict, workspace = judge_edit(response, task, EDIT_FORMATS.get(name), box, LIMITS)
    assert verdict.outcome is Outcome.MALFORMED_EDIT
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
    verdict, workspace = judge_edit(first, task, diff, box, LIMITS)
    assert verdict.outcome is Outcome.FAILED and "initial_value" in workspace[path]
    verdict, workspace = judge_edit(second, task, diff, box, LIMITS, workspace)
    assert verdict.outcome is Outcome.PASSED and workspace[path].rstrip() == example.rstrip()


def test_the_runner_collects_what_the_trusted_side_expects(box: Sandbox, tmp_path: Path) -> None:
    """A helper imported into a test file, or a test* function that takes arguments, is
    no test on either side: such a task still passes when its code is right."""
    tests = {
        "helpers.py": "def test_helper(x):\n    return x\n",
        "a_test.py": (
            "from helpers import test_helper\nfrom a import f\n\n"
            "def test_with_args(value):\n    pass\n\n"
            "def test_f():\n    assert f() == 1\n"
        ),
    }
    files = tuple(TestFile(name, source, Visibility.VISIBLE) for name, source in tests.items())
    task = WorkspaceTask("a", "mine", "Do it.", (("a.py", ""),), ("a.py",), files)
    assert expected_tests(tests) == {"a_test.py::test_f"}
    verdict = judge_workspace({"a.py": "def f():\n    return 1\n"}, task, box, LIMITS)
    assert verdict.outcome is Outcome.PASSED, verdict.visible_output
