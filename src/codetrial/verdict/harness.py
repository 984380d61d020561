"""The trusted side of a test run: the task's own tests, run in this process.

The candidate is not here. Tests call proxies: each call goes to the sandboxed child
as plain data and its result, its mutations of the arguments and its exceptions come
back. Assertions, expected values and the decision all stay on this side.

Two harnesses, named by the task: "pytest" runs test files that import `candidate`
(in-process, one run at a time); "check" runs a benchmark's check(candidate) function
or top-level asserts, with the benchmark's helpers beside it.
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codetrial.records import TestResult, Visibility
from codetrial.sandbox import LimitHit, Session
from codetrial.tasks import Task

_UNUSED_PLUGINS = (
    "cacheprovider", "faulthandler", "stepwise", "unraisableexception", "threadexception",
    "logging", "junitxml", "pastebin", "doctest", "legacypath", "setuponly", "setupplan",
    "warnings",
)  # fmt: skip
_ARGS = (
    "-q",
    "--disable-warnings",
    "--maxfail=1",
    "--capture=sys",
    "--import-mode=importlib",
    *(arg for plugin in _UNUSED_PLUGINS for arg in ("-p", f"no:{plugin}")),
)


@dataclass
class Recorder:
    """A pytest plugin object that keeps per-test results as records."""

    visibility: Visibility
    collected: int = 0
    finished: bool = False
    results: list[TestResult] = field(default_factory=list)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.collected = len(items)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.results.append(
                TestResult(
                    name=report.nodeid or "<collection>",
                    visibility=self.visibility,
                    outcome="error",
                    exception_type="CollectionError",
                )
            )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        if report.when == "call" or report.failed:
            self.results.append(
                TestResult(
                    name=item.name,
                    visibility=self.visibility,
                    outcome=report.outcome if report.when == "call" else "error",
                    exception_type=call.excinfo.typename if call.excinfo else None,
                    duration_s=report.duration,
                )
            )

    def pytest_sessionfinish(self) -> None:
        self.finished = True

    @property
    def complete(self) -> bool:
        """Every collected test ran and reported; nothing cut the run short."""
        return self.finished and self.collected > 0 and len(self.results) == self.collected


def _proxy(session: Session, name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return session.call(name, list(args), kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _candidate_module(session: Session) -> types.ModuleType:
    module = types.ModuleType("candidate", "proxies to the sandboxed candidate")
    for name in session.functions:
        setattr(module, name, _proxy(session, name))
    return module


_PYTEST_LOCK = threading.Lock()


def run_pytest(task: Task, visibility: Visibility, session: Session) -> tuple[Recorder, str]:
    """Run the test files against the session's candidate; (results, pytest's output).
    pytest keeps global state, so runs in threads take turns."""
    with _PYTEST_LOCK:
        return _run_pytest(task, visibility, session)


def _run_pytest(task: Task, visibility: Visibility, session: Session) -> tuple[Recorder, str]:
    tests = task.tests_of(visibility)
    recorder = Recorder(visibility)
    output = io.StringIO()
    saved = sys.modules.get("candidate")
    with tempfile.TemporaryDirectory(prefix="codetrial-tests-") as folder:
        root = Path(folder)
        (root / "pytest.ini").write_text("[pytest]\n")
        for test in tests:
            (root / test.name).write_text(test.source, encoding="utf-8")
        sys.modules["candidate"] = _candidate_module(session)
        try:
            with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
                pytest.main(
                    [*_ARGS, "--rootdir", folder, "-c", str(root / "pytest.ini"),
                     *(str(root / t.name) for t in tests)],
                    plugins=[recorder],
                )  # fmt: skip
        finally:
            _forget_modules(root)
            if saved is None:
                sys.modules.pop("candidate", None)
            else:
                sys.modules["candidate"] = saved
    return recorder, output.getvalue()


def _forget_modules(root: Path) -> None:
    """Test modules must not survive into the next run, which may reuse their names."""
    prefix = str(root)
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(prefix):
            del sys.modules[name]


@functools.lru_cache(maxsize=4096)
def _compiled(source: str, name: str) -> types.CodeType:
    return compile(source, name, "exec")


def run_check(task: Task, visibility: Visibility, session: Session) -> tuple[Recorder, str]:
    """Run the task's check code against the candidate: the test passes when it
    returns without raising. Compiled once per task and reused."""
    recorder = Recorder(visibility, collected=1)
    proxy = _proxy(session, task.entry_point)
    outcome, exception, output = "passed", None, ""
    try:
        if task.entry_point not in session.functions:
            detail = session.load_error or f"{task.entry_point} is not defined"
            raise ImportError(f"cannot import name {task.entry_point!r}: {detail}")
        namespace: dict[str, object] = {"__name__": "__check__"}
        if task.context:
            exec(_compiled(task.context, "context.py"), namespace)
        namespace[task.entry_point] = proxy
        for test in task.tests_of(visibility):
            exec(_compiled(test.source, test.name), namespace)
        check = namespace.get("check")
        if callable(check):
            check(proxy)
    except (Exception, LimitHit) as exc:
        outcome = "failed" if isinstance(exc, AssertionError) else "error"
        exception = type(exc).__name__
        output = "".join(traceback.format_exception(exc, limit=-3))
    recorder.results.append(
        TestResult(name="check", visibility=visibility, outcome=outcome, exception_type=exception)
    )
    recorder.finished = True
    return recorder, output


def run_assertions(
    task: Task, session: Session, assertions: list[str], per_test_s: float | None = None
) -> tuple[list[bool], bool]:
    """Run assertion statements (say, tests a model wrote) against the candidate, each
    on its own and, given `per_test_s`, within that many wall seconds: (which passed,
    whether the candidate's process was stopped midway, in which case the results
    cover the assertions up to and including the one that stopped it)."""
    namespace: dict[str, object] = {"__name__": "__generated__"}
    passed: list[bool] = []
    if task.entry_point not in session.functions:
        return [False] * len(assertions), False
    if task.context:
        exec(_compiled(task.context, "context.py"), namespace)
    namespace[task.entry_point] = _proxy(session, task.entry_point)
    session_deadline = session.deadline
    for assertion in assertions:
        if per_test_s is not None:
            session.deadline = min(session_deadline, time.monotonic() + per_test_s)
        try:
            exec(_compiled(assertion, "generated_test.py"), namespace)
            passed.append(True)
        except LimitHit:
            passed.append(False)
            return passed, True
        except Exception:
            passed.append(False)
    return passed, False


HARNESSES = {"pytest": run_pytest, "check": run_check}
