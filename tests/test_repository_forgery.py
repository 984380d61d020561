"""Patches that leave a swe-mini bug in place and forge its repository's tests from
inside pytest's process, where the patched code runs. Each attack is first shown to
resolve its instance under a naive runner (no sentinel tests, and a channel that
sends through the `json` and `os` a patch can rebind), then judged as codetrial
judges it: `tampered` where the forgery is caught, `failed` where it cannot take
hold at all."""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.kinds.repository import REPOSITORY, judged
from codetrial.records import FAIL_TO_PASS, PASS_TO_PASS, Outcome, Verdict, group_counts
from codetrial.sandbox import Sandbox, SandboxPolicy
from codetrial.tasks import RepositoryTask, load_suite
from codetrial.verdict.pool import JudgePool
from codetrial.verdict.repository import judge_repository
from codetrial.verdict.sentinels import plant
from tests.conftest import FIXTURES, SWE_DOWNLOADS, SWE_WHEELS

SET = FIXTURES / "swe-mini"
INSTANCE = "pytoolz__toolz-1"
PACKAGE = "toolz/__init__.py"


@dataclass(frozen=True)
class Toolz:
    """The instance, a pool to judge it in, and its clone (to write patches against)."""

    task: RepositoryTask
    pool: JudgePool
    clone: Path

    def base(self, path: str) -> str:
        shown = subprocess.run(
            ["git", "-C", str(self.clone), "show", f"{self.task.base_commit}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        )
        return shown.stdout

    def appended(self, path: str, lines: str) -> str:
        """A patch that adds `lines` at the end of `path` (a new file if it is not there)."""
        old = self.base(path) if path in self.files() else ""
        diff = difflib.unified_diff(
            old.splitlines(keepends=True),
            (old + lines).splitlines(keepends=True),
            f"a/{path}" if old else "/dev/null",
            f"b/{path}",
        )
        new = "" if old else "new file mode 100644\n"
        return f"diff --git a/{path} b/{path}\n{new}" + "".join(diff)

    def files(self) -> list[str]:
        listed = subprocess.run(
            ["git", "-C", str(self.clone), "ls-tree", "-r", "--name-only", self.task.base_commit],
            capture_output=True,
            text=True,
            check=True,
        )
        return listed.stdout.splitlines()

    def judge(self, patch: str) -> Verdict:
        return judged(self.pool, patch, self.task).result()

    def naive(self, patch: str) -> Verdict:
        """The verdict of a runner without the defences: what the attack is worth."""

        def work(sandbox: Sandbox, limits: Limits) -> Verdict:
            repositories = self.pool.repositories
            assert repositories is not None
            return judge_repository(patch, self.task, repositories, sandbox, limits, guarded=False)

        return self.pool.judge_with((self.task.digest, "naive", patch), work).result()


@pytest.fixture(scope="module")
def toolz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolz]:
    root = tmp_path_factory.mktemp("forgery")
    sdists = SWE_DOWNLOADS / "sdists"
    assert sdists.is_dir(), f"{sdists} is missing: `make test` downloads it"
    build = [sys.executable, SET / "build.py", "--sdists", sdists, "--out", root / "repos"]
    subprocess.run([*map(str, build), "--repos-only"], check=True, capture_output=True)
    (task,) = load_suite("swe", [INSTANCE], SET / "instances.jsonl")
    assert isinstance(task, RepositoryTask)
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("CODETRIAL_CACHE", str(root / "cache"))
        repositories = REPOSITORY.prepare([task], root / "repos", SWE_WHEELS, "test").repositories
    pool = JudgePool(1, SandboxPolicy(Limits(timeout_s=60, cpu_s=60)), repositories=repositories)
    yield Toolz(task, pool, root / "repos" / task.clone_name)
    pool.close()


def _resolved_by_forgery(verdict: Verdict, task: RepositoryTask) -> None:
    assert verdict.outcome is Outcome.PASSED, verdict.hidden_output
    assert group_counts(verdict.tests) == {
        FAIL_TO_PASS: (1, 1),
        PASS_TO_PASS: (len(task.pass_to_pass), len(task.pass_to_pass)),
    }


REWRITES_JSON = """

import json as _json

_dumps = _json.dumps


def _dumps_passing(record, *args, **kwargs):
    if isinstance(record, dict) and record.get("outcome") in ("failed", "error"):
        record = {k: v for k, v in record.items() if k not in ("trace", "exception")}
        record["outcome"] = "passed"
    return _dumps(record, *args, **kwargs)


_json.dumps = _dumps_passing
"""

REWRITES_OS_WRITE = """

import os as _os
import re as _re

_write = _os.write


def _write_passing(fd, data):
    if isinstance(data, bytes) and b'"nonce"' in data:
        _write(fd, _re.sub(rb'"outcome": ?"(failed|error)"', b'"outcome": "passed"', data))
        return len(data)
    return _write(fd, data)


_os.write = _write_passing
"""

REWRITES_ENCODER = """

import json as _json

_encode = _json.JSONEncoder.encode


def _encode_passing(self, record):
    if isinstance(record, dict) and record.get("outcome") in ("failed", "error"):
        record = {**record, "outcome": "passed"}
    return _encode(self, record)


_json.JSONEncoder.encode = _encode_passing
_json._default_encoder = _json.JSONEncoder()
"""


@pytest.mark.parametrize(
    "attack",
    [REWRITES_JSON, REWRITES_OS_WRITE, REWRITES_ENCODER],
    ids=["json.dumps", "os.write", "json.JSONEncoder"],
)
def test_rewriting_the_runner_s_records_through_the_standard_library_changes_nothing(
    toolz: Toolz, attack: str
) -> None:
    """The channel's writer and serializer were taken before the package was imported:
    rebinding `json` or `os` from the package's `__init__` reaches none of it, and the
    bug it leaves in place fails its test."""
    patch = toolz.appended(PACKAGE, attack)
    _resolved_by_forgery(toolz.naive(patch), toolz.task)
    verdict = toolz.judge(patch)
    assert verdict.outcome is Outcome.FAILED, verdict.detail
    assert group_counts(verdict.tests)[FAIL_TO_PASS] == (0, 1)


REWRITES_THE_RUNNER = """

import sys as _sys

for _runner in ("testrun", "pytestrun"):
    _module = _sys.modules[_runner]
    for _name in list(vars(_module)):
        if not _name.startswith("__"):
            setattr(_module, _name, None)
"""


def test_rebinding_the_runner_s_own_names_changes_nothing(toolz: Toolz) -> None:
    """What the runner sends with and decides by was in hand before the package was
    imported, not looked up in its modules as each test ends."""
    verdict = toolz.judge(toolz.appended(PACKAGE, REWRITES_THE_RUNNER))
    assert verdict.outcome is Outcome.FAILED, verdict.detail
    assert group_counts(verdict.tests) == {
        FAIL_TO_PASS: (0, 1),
        PASS_TO_PASS: (len(toolz.task.pass_to_pass), len(toolz.task.pass_to_pass)),
    }


FORCES_TEST_REPORTS = """

import _pytest.reports as _reports

_init = _reports.TestReport.__init__


def _init_passing(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.outcome, self.longrepr = "passed", None


_reports.TestReport.__init__ = _init_passing
"""

REGISTERS_A_PLUGIN = '''

import sys as _sys

import pytest as _pytest


class _Passing:
    """Forces every report to passed; `known`: the tests it lets run (all when empty)."""

    known = set()
    drops = True

    def pytest_collection_modifyitems(self, items):
        if self.known and self.drops:
            items[:] = [item for item in items if item.nodeid in self.known]

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None
        if self.known and item.nodeid not in self.known:
            report.nodeid = item.nodeid + "_renamed"


def _config():
    frame = _sys._getframe()
    while frame is not None:
        config = getattr(frame.f_locals.get("self"), "config", None)
        if hasattr(config, "pluginmanager"):
            return config
        frame = frame.f_back
    raise LookupError("no pytest here")


_config().pluginmanager.register(_Passing())
'''


@pytest.mark.parametrize(
    "attack", [FORCES_TEST_REPORTS, REGISTERS_A_PLUGIN], ids=["TestReport", "plugin"]
)
def test_forcing_pytest_s_reports_to_passed_is_tampered(toolz: Toolz, attack: str) -> None:
    """The sentinel tests planted to fail report passed: the run is tampered, and its
    evidence names them."""
    patch = toolz.appended(PACKAGE, attack)
    _resolved_by_forgery(toolz.naive(patch), toolz.task)
    verdict = toolz.judge(patch)
    assert verdict.outcome is Outcome.TAMPERED, verdict.detail
    assert re.search(r"sentinel \S+ planted to fail reported passed", verdict.detail)
    assert verdict.feedback is None


def test_a_conftest_in_a_new_folder_is_removed_before_the_run(toolz: Toolz) -> None:
    """A conftest the patch adds anywhere is restored away, so the `-p` that would load
    it names nothing: no test runs, and the instance is unresolved. The same hooks in a
    module of another name would have resolved it under a naive runner."""
    hooks = REGISTERS_A_PLUGIN.replace("_config().pluginmanager.register(_Passing())\n", "")
    hooks = hooks.replace("import sys as _sys\n", "").split("def _config", 1)[0]
    hooks += "\n\ndef pytest_configure(config):\n    config.pluginmanager.register(_Passing())\n"
    loads = "\n[tool:pytest]\naddopts = -p toolz.tests.hooks.{}\n"
    named_otherwise = toolz.appended("toolz/tests/hooks/plugin.py", hooks)
    named_otherwise += toolz.appended("toolz/tests/hooks/__init__.py", "")
    named_otherwise += toolz.appended("setup.cfg", loads.format("plugin"))
    _resolved_by_forgery(toolz.naive(named_otherwise), toolz.task)
    patch = toolz.appended("toolz/tests/hooks/conftest.py", hooks)
    patch += toolz.appended("toolz/tests/hooks/__init__.py", "")
    patch += toolz.appended("setup.cfg", loads.format("conftest"))
    verdict = toolz.judge(patch)
    assert verdict.outcome is Outcome.FAILED, verdict.detail
    assert group_counts(verdict.tests)[FAIL_TO_PASS] == (0, 1)


@pytest.mark.parametrize("how", ["deleted", "renamed"])
def test_a_sentinel_deleted_or_renamed_is_tampered(toolz: Toolz, how: str) -> None:
    """A forger that knows the listed tests' names (they are public) forces them to
    pass and deletes, or renames, every other test: the sentinels are missing."""
    known = json.dumps(sorted([*toolz.task.fail_to_pass, *toolz.task.pass_to_pass]))
    attack = REGISTERS_A_PLUGIN.replace("known = set()", f"known = set({known})")
    if how == "renamed":
        attack = attack.replace("drops = True", "drops = False")
    patch = toolz.appended(PACKAGE, attack)
    _resolved_by_forgery(toolz.naive(patch), toolz.task)
    verdict = toolz.judge(patch)
    assert verdict.outcome is Outcome.TAMPERED, verdict.detail
    assert re.search(r"sentinel \S+ planted to (pass|fail) did not report", verdict.detail)


def test_sentinels_are_neither_counted_nor_shown(toolz: Toolz) -> None:
    """The gold patch resolves with exactly the listed tests counted; a patch that
    breaks some shows the failures of listed tests only, though sentinels planted to
    fail failed beside them."""
    verdict = toolz.judge(toolz.task.gold_patch)
    assert verdict.outcome is Outcome.PASSED, verdict.detail
    listed = {*toolz.task.fail_to_pass, *toolz.task.pass_to_pass}
    assert {t.name for t in verdict.tests} == listed and len(verdict.tests) == len(listed)
    breaks = toolz.appended("toolz/itertoolz.py", "\n\ndef frequencies(seq):\n    return {}\n")
    unresolved = toolz.judge(breaks)
    assert unresolved.outcome is Outcome.FAILED, unresolved.detail
    assert {t.name for t in unresolved.tests} == listed
    shown = (unresolved.feedback or "") + unresolved.hidden_output + unresolved.detail
    named = set(re.findall(r"toolz/tests/\w+\.py::\w+", shown))
    assert "toolz/tests/test_itertoolz.py::test_frequencies" in named
    assert named <= listed


def test_every_swe_mini_instance_takes_sentinels(toolz: Toolz, tmp_path: Path) -> None:
    """Sentinels find a host among each instance's test files, function-style or
    unittest-style, and the file they are appended to still compiles."""
    for task in load_suite("swe", None, SET / "instances.jsonl"):
        assert isinstance(task, RepositoryTask)
        folder = tmp_path / task.id
        folder.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(toolz.clone.parent / task.clone_name), "archive", task.base_commit],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
        planted = plant(folder, task.test_files)
        assert len(planted) == 4 and sum(s.fails for s in planted) == 2, task.id
        (host,) = {s.node.split("::")[0] for s in planted}
        compile((folder / host).read_text(), host, "exec")
