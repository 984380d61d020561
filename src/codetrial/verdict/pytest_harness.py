"""The "pytest" harness: test files that import `candidate`, run in-process against
the candidate's proxies, one run at a time.

Plain test files (module-level test functions that take nothing and have no
decorators) run directly, with pytest's assertion rewriting: a full pytest session
costs about 20 ms to set up, several times the candidate's own run. Anything that
needs pytest to arrange it (fixtures, parametrize, classes, setup functions) runs
under pytest.main. Both run every test and record the same results.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import linecache
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest
from _pytest.assertion.rewrite import rewrite_asserts

from codetrial.records import TestOutcome, TestResult, Visibility
from codetrial.sandbox import LimitHit, Session
from codetrial.syntax import compiled, parse, turns
from codetrial.tasks import Task, TestFile
from codetrial.verdict.harness import HARNESSES, Recorder, proxy

_UNUSED_PLUGINS = (
    "cacheprovider",
    "faulthandler",
    "stepwise",
    "unraisableexception",
    "threadexception",
    "logging",
    "junitxml",
    "pastebin",
    "doctest",
    "legacypath",
    "setuponly",
    "setupplan",
    "warnings",
)
_ARGS = (
    "-q",
    "--disable-warnings",
    "--capture=sys",
    "--import-mode=importlib",
    *(arg for plugin in _UNUSED_PLUGINS for arg in ("-p", f"no:{plugin}")),
)


class _Plugin(Recorder):
    """A pytest plugin object that keeps per-test results as records."""

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.collected = len(items)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.results.append(_error_result(report.nodeid or "<collection>", self.visibility))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self) -> Generator[None, Any, None]:
        """Collecting imports the test files and rewrites their asserts: it parses, so
        it takes its turn (see codetrial.syntax)."""
        with turns():
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        with turns():  # a failure's report parses the test's source
            outcome = yield
        report: pytest.TestReport = outcome.get_result()
        if report.when == "call" or report.failed:
            self.results.append(
                TestResult(
                    name=item.name,
                    visibility=self.visibility,
                    outcome=TestOutcome(report.outcome if report.when == "call" else "error"),
                    exception_type=call.excinfo.typename if call.excinfo else None,
                    duration_s=report.duration,
                )
            )

    def pytest_sessionfinish(self) -> None:
        self.finished = True


def _candidate_module(session: Session) -> types.ModuleType:
    module = types.ModuleType("candidate", "proxies to the sandboxed candidate")
    for name in session.functions:
        setattr(module, name, proxy(session, name))
    return module


_PYTEST_LOCK = threading.Lock()


def run_pytest(task: Task, visibility: Visibility, session: Session) -> tuple[Recorder, str]:
    """Run the test files against the session's candidate; (results, test output).
    The candidate module and pytest's state are global, so runs in threads take turns."""
    tests = task.tests_of(visibility)
    with _PYTEST_LOCK:
        if all(_plain(test.name, test.source) is not None for test in tests):
            return run_plain_tests(tests, visibility, session)
        return run_pytest_main(tests, visibility, session)


_SETUP_NAMES = frozenset(
    f"{verb}_{scope}" for verb in ("setup", "teardown") for scope in ("module", "function")
) | {"setup", "teardown"}
_PYTEST_FEATURES = ("fixture", "pytestmark", "conftest", "pytest_", "skip", "xfail", "exit(")


@functools.lru_cache(maxsize=1024)
def _plain(name: str, source: str) -> types.CodeType | None:
    """The file compiled with pytest's assertion rewriting, if it is plain; else None."""
    if any(feature in source for feature in _PYTEST_FEATURES):
        return None
    try:
        tree = parse(source, name)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            return None
        if isinstance(node, ast.AsyncFunctionDef) or (
            isinstance(node, ast.FunctionDef) and node.name in _SETUP_NAMES
        ):
            return None
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            arguments = node.args
            if node.decorator_list or arguments.args or arguments.posonlyargs:
                return None
            if arguments.kwonlyargs or arguments.vararg or arguments.kwarg:
                return None
        bound: list[str] = []
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound = [alias.asname or alias.name for alias in node.names]
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            bound = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
        if any(b.startswith("test") for b in bound):
            return None
    rewrite_asserts(tree, source.encode(), name)
    return compiled(tree, name)


def run_plain_tests(
    tests: tuple[TestFile, ...], visibility: Visibility, session: Session
) -> tuple[Recorder, str]:
    """Import each file against the candidate's proxies, then call its test functions
    in order. A file that fails to import stops the run before any test, as a
    collection error."""
    recorder = Recorder(visibility)
    output = io.StringIO()
    functions: list[Callable[[], object]] = []
    with (
        _candidate_installed(session),
        contextlib.redirect_stdout(output),
        contextlib.redirect_stderr(output),
    ):
        for test in tests:
            code = _plain(test.name, test.source)
            assert code is not None
            linecache.cache[test.name] = (
                len(test.source),
                None,
                test.source.splitlines(True),
                test.name,
            )
            namespace: dict[str, Any] = {"__name__": Path(test.name).stem, "__file__": test.name}
            try:
                exec(code, namespace)
            except (Exception, LimitHit, pytest.fail.Exception) as exc:
                recorder.results.append(_error_result(test.name, visibility))
                output.write(f"ERROR collecting {test.name}\n{_failure_text(exc)}")
                continue
            functions.extend(
                v
                for k, v in namespace.items()
                if k.startswith("test") and isinstance(v, types.FunctionType)
            )
        if recorder.results:
            return recorder, output.getvalue()
        recorder.collected = len(functions)
        for function in functions:
            started = time.perf_counter()
            outcome, exception = TestOutcome.PASSED, None
            try:
                function()
            except (Exception, LimitHit, pytest.fail.Exception) as exc:
                outcome, exception = TestOutcome.FAILED, exc
            recorder.results.append(
                TestResult(
                    name=function.__name__,
                    visibility=visibility,
                    outcome=outcome,
                    exception_type=None if exception is None else type(exception).__name__,
                    duration_s=time.perf_counter() - started,
                )
            )
            if exception is not None:
                where = f"{function.__code__.co_filename}::{function.__name__}"
                output.write(f"FAILED {where}\n{_failure_text(exception)}")
    recorder.finished = True
    passed = sum(result.outcome is TestOutcome.PASSED for result in recorder.results)
    output.write(f"{passed} passed, {len(functions) - passed} failed\n")
    return recorder, output.getvalue()


def _error_result(name: str, visibility: Visibility) -> TestResult:
    return TestResult(
        name=name,
        visibility=visibility,
        outcome=TestOutcome.ERROR,
        exception_type="CollectionError",
    )


def _failure_text(exc: BaseException) -> str:
    """The failure as the test file sees it: the frames from the test files down."""
    with turns():
        frames = traceback.extract_tb(exc.__traceback__)[1:]
        lines = traceback.format_list(frames)
        return "".join([*lines, *traceback.format_exception_only(exc)])


@contextlib.contextmanager
def _candidate_installed(session: Session) -> Generator[None, None, None]:
    saved = sys.modules.get("candidate")
    sys.modules["candidate"] = _candidate_module(session)
    try:
        yield
    finally:
        if saved is None:
            sys.modules.pop("candidate", None)
        else:
            sys.modules["candidate"] = saved


def run_pytest_main(
    tests: tuple[TestFile, ...], visibility: Visibility, session: Session
) -> tuple[Recorder, str]:
    """Run the files in a full pytest session, for files that need more than plain
    test functions."""
    recorder = _Plugin(visibility)
    output = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="codetrial-tests-") as folder:
        root = Path(folder)
        (root / "pytest.ini").write_text("[pytest]\n")
        for test in tests:
            (root / test.name).write_text(test.source, encoding="utf-8")
        try:
            with (
                _candidate_installed(session),
                contextlib.redirect_stdout(output),
                contextlib.redirect_stderr(output),
            ):
                pytest.main(
                    [
                        *_ARGS,
                        "--rootdir",
                        folder,
                        "-c",
                        str(root / "pytest.ini"),
                        *(str(root / t.name) for t in tests),
                    ],
                    plugins=[recorder],
                )
        finally:
            _forget_modules(root)
    return recorder, output.getvalue()


def _forget_modules(root: Path) -> None:
    """Test modules must not survive into the next run, which may reuse their names."""
    prefix = str(root)
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(prefix):
            del sys.modules[name]


HARNESSES.register("pytest", run_pytest)
