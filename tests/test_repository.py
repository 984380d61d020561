"""Repository tasks judged with SWE-bench's semantics, on a small repository made here:
a base commit with a bug, a gold patch, a test patch that adds the test showing it.
The patches a candidate might send probe each rule: strict and tolerant apply, the
restored tests, conftest files, symbolic links, a run that ends early."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.errors import RepositoryError, TaskFormatError
from codetrial.kinds.repository import REPOSITORY, judged
from codetrial.records import Outcome, Verdict, group_counts
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import load_suite
from codetrial.tasks.repository import RepositoryTask
from codetrial.verdict.pool import JudgePool
from tests.conftest import SWE_WHEELS, git_commit

SOURCE = '''"""Small arithmetic."""


def add(a, b):
    return a - b


def mul(a, b):
    return a * b


def half(a):
    return a / 2
'''
TESTS = """from calc import add, half, mul


def test_mul():
    assert mul(2, 3) == 6


def test_half():
    assert half(3) == 1.5
"""


def _diff(path: str, old: str, new: str) -> str:
    """A git-style patch that turns `old` into `new` in `path`."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def _edit(path: str, *changes: tuple[str, str]) -> str:
    """A git-style patch that makes `changes` (old text, new text) to `path`."""
    old = SOURCE if path.startswith("calc") else TESTS
    new = old
    for before, after in changes:
        new = new.replace(before, after)
    return _diff(path, old, new)


GOLD = _edit("calc/__init__.py", ("return a - b", "return a + b"))
TEST_PATCH = _diff(
    "tests/test_calc.py", TESTS, TESTS + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"
)


def repository_instance(repos: Path, folder: Path) -> Path:
    """The instance's clone under `repos`, its instances.jsonl and environments.toml in
    `folder`; the instances file's path."""
    clone = repos / "acme__calc"
    base = git_commit(clone, {"calc/__init__.py": SOURCE, "tests/test_calc.py": TESTS})
    record = {
        "instance_id": "acme__calc-1",
        "repo": "acme/calc",
        "base_commit": base,
        "problem_statement": "add(2, 3) returns -1 instead of 5.",
        "patch": GOLD,
        "test_patch": TEST_PATCH,
        "version": "0.1",
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
        "PASS_TO_PASS": json.dumps(
            ["tests/test_calc.py::test_mul", "tests/test_calc.py::test_half"]
        ),
    }
    (folder / "instances.jsonl").write_text(json.dumps(record) + "\n")
    (folder / "environments.toml").write_text('["acme/calc"."0.1"]\npackages = ["pytest==8.3.4"]\n')
    return folder / "instances.jsonl"


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RepositoryTask, JudgePool]]:
    folder = tmp_path_factory.mktemp("calc")
    instances = repository_instance(folder / "repos", folder)
    (task,) = load_suite("swe", None, instances)
    assert isinstance(task, RepositoryTask)
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("CODETRIAL_CACHE", str(folder / "cache"))
        repositories = REPOSITORY.prepare([task], folder / "repos", SWE_WHEELS, "test").repositories
    pool = JudgePool(2, SandboxPolicy(Limits(timeout_s=60, cpu_s=60)), repositories=repositories)
    yield task, pool
    pool.close()


def _judge(calc: tuple[RepositoryTask, JudgePool], patch: str) -> Verdict:
    task, pool = calc
    return judged(pool, patch, task).result()


def test_the_gold_patch_resolves_and_every_listed_test_is_counted(calc) -> None:  # type: ignore[no-untyped-def]
    verdict = _judge(calc, GOLD)
    assert verdict.outcome is Outcome.PASSED, verdict.hidden_output
    assert group_counts(verdict.tests) == {"FAIL_TO_PASS": (1, 1), "PASS_TO_PASS": (2, 2)}
    assert "applied with git apply" in verdict.detail
    assert dict(verdict.phases).keys() == {"patch", "tests"}


def test_empty_and_unappliable_patches_are_not_run(calc) -> None:  # type: ignore[no-untyped-def]
    assert _judge(calc, "").outcome is Outcome.NO_CODE
    assert _judge(calc, "  \n").outcome is Outcome.NO_CODE
    nowhere = _edit("calc/__init__.py", ("return a * b", "return b * a")).replace(
        "-    return a * b", "-    return a ** b"
    )
    verdict = _judge(calc, nowhere)
    assert verdict.outcome is Outcome.MALFORMED_EDIT
    assert "git apply" in verdict.detail and "patch --fuzz=5" in verdict.detail


def test_the_tests_at_the_base_commit_fail_only_where_the_issue_is(calc) -> None:  # type: ignore[no-untyped-def]
    task, pool = calc
    verdict = judged(pool, "", task, baseline=True).result()
    assert verdict.outcome is Outcome.FAILED
    assert group_counts(verdict.tests) == {"FAIL_TO_PASS": (0, 1), "PASS_TO_PASS": (2, 2)}


def test_a_fix_that_breaks_a_pass_to_pass_test_is_unresolved(calc) -> None:  # type: ignore[no-untyped-def]
    both = _edit("calc/__init__.py", ("return a - b", "return a + b"), ("a / 2", "a // 2"))
    verdict = _judge(calc, both)
    assert verdict.outcome is Outcome.FAILED
    assert group_counts(verdict.tests) == {"FAIL_TO_PASS": (1, 1), "PASS_TO_PASS": (1, 2)}
    assert "test_half" in (verdict.feedback or "")


def test_a_patch_with_shifted_context_applies_tolerantly(calc) -> None:  # type: ignore[no-untyped-def]
    stale = GOLD.replace(" def mul(a, b):\n", " def mul(x, y):\n")
    verdict = _judge(calc, stale)
    assert verdict.outcome is Outcome.PASSED, verdict.detail
    assert "applied with patch --fuzz=5" in verdict.detail


def test_a_patch_cannot_change_the_tests_that_judge_it(calc) -> None:  # type: ignore[no-untyped-def]
    weakened = _edit("tests/test_calc.py", ("assert half(3) == 1.5", "assert True"))
    verdict = _judge(calc, weakened)
    assert verdict.outcome is Outcome.FAILED
    assert group_counts(verdict.tests)["FAIL_TO_PASS"] == (0, 1)


def test_a_conftest_the_patch_adds_is_removed(calc) -> None:  # type: ignore[no-untyped-def]
    hook = (
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    report = outcome.get_result()\n    report.outcome = 'passed'\n"
    )
    lines = "".join(f"+{line}\n" for line in hook.splitlines())
    added = (
        "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n"
        f"+++ b/conftest.py\n@@ -0,0 +1,{len(hook.splitlines())} @@\n{lines}"
    )
    verdict = _judge(calc, added)
    assert verdict.outcome is Outcome.FAILED
    assert group_counts(verdict.tests)["FAIL_TO_PASS"] == (0, 1)


def test_a_symbolic_link_in_a_patch_is_not_followed(calc) -> None:  # type: ignore[no-untyped-def]
    link = (
        "diff --git a/calc/secret b/calc/secret\nnew file mode 120000\n--- /dev/null\n"
        "+++ b/calc/secret\n@@ -0,0 +1 @@\n+/etc/shadow\n\\ No newline at end of file\n"
    )
    reads = GOLD.replace(
        "+    return a + b\n",
        "+    return a + b + len(open(__file__[:-11] + 'secret').read()) * 0\n",
    )
    verdict = _judge(calc, link + reads)
    assert verdict.outcome is Outcome.FAILED
    assert "FileNotFoundError" in verdict.hidden_output or "No such file" in verdict.hidden_output


def test_code_that_ends_the_run_early_resolves_nothing(calc) -> None:  # type: ignore[no-untyped-def]
    exits = _edit(
        "calc/__init__.py",
        ("return a - b", "return a + b"),
        ("return a / 2\n", "return a / 2\n\n\nimport os\n\nos._exit(0)\n"),
    )
    verdict = _judge(calc, exits)
    assert verdict.outcome is not Outcome.PASSED
    assert "the runner did not finish" in verdict.hidden_output


def test_instances_and_clones_that_are_missing_say_what_to_do(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CODETRIAL_CACHE", str(tmp_path / "cache"))
    instances = repository_instance(tmp_path / "repos", tmp_path)
    tasks = load_suite(str(instances))
    with pytest.raises(RepositoryError, match="no clone of acme/calc"):
        REPOSITORY.prepare(tasks, tmp_path / "elsewhere", SWE_WHEELS, "codetrial run")
    record = json.loads(instances.read_text())
    record["base_commit"] = "0" * 40
    instances.write_text(json.dumps(record) + "\n")
    with pytest.raises(RepositoryError, match="codetrial never fetches"):
        REPOSITORY.prepare(
            load_suite(str(instances)), tmp_path / "repos", SWE_WHEELS, "codetrial run"
        )
    (tmp_path / "environments.toml").write_text('["acme/other"."0.1"]\npackages = []\n')
    with pytest.raises(TaskFormatError, match=r'add a table \["acme/calc"."0.1"\]'):
        load_suite(str(instances))
    (tmp_path / "environments.toml").unlink()
    with pytest.raises(TaskFormatError, match=r"no environments\.toml beside it"):
        load_suite(str(instances))


def test_a_missing_environment_is_built_only_when_asked(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CODETRIAL_CACHE", str(tmp_path / "cache"))
    instances = repository_instance(tmp_path / "repos", tmp_path)
    tasks = load_suite(str(instances))
    with pytest.raises(RepositoryError, match="codetrial envs"):
        REPOSITORY.prepare(tasks, tmp_path / "repos", None, "codetrial run")
    built = REPOSITORY.prepare(tasks, tmp_path / "repos", SWE_WHEELS, "codetrial run").environments
    assert built["acme__calc-1"].installed["pytest"] == "8.3.4"
    again = REPOSITORY.prepare(tasks, tmp_path / "repos", None, "codetrial run").environments
    assert again == built


def test_a_skip_keeps_a_pass_to_pass_test_but_never_resolves_a_fail_to_pass_one(calc) -> None:  # type: ignore[no-untyped-def]
    skips = "import pytest\n\n    pytest.skip('not yet')\n    "
    kept = _edit(
        "calc/__init__.py", ("return a - b", "return a + b"), ("return a / 2", f"{skips}return 0")
    )
    verdict = _judge(calc, kept)
    assert verdict.outcome is Outcome.PASSED, verdict.hidden_output
    half = next(t for t in verdict.tests if t.name.endswith("test_half"))
    assert half.outcome.value == "skipped"
    dodged = _edit("calc/__init__.py", ("return a - b", f"{skips}return a + b"))
    verdict = _judge(calc, dodged)
    assert verdict.outcome is Outcome.FAILED
    assert group_counts(verdict.tests) == {"FAIL_TO_PASS": (0, 1), "PASS_TO_PASS": (2, 2)}
