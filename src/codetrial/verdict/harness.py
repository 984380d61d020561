"""The trusted side of a test run: the task's own tests, run in this process.

The candidate is not here. Tests call proxies: each call goes to the sandboxed child
as plain data and its result, its mutations of the arguments and its exceptions come
back. Assertions, expected values and the decision all stay on this side.

Two harnesses, named by the task: "check" runs a benchmark's check(candidate)
function or top-level asserts, with the benchmark's helpers beside it; "pytest" runs
test files that import `candidate` (see pytest_harness.py, imported only when a task
needs it).
"""

from __future__ import annotations

import functools
import linecache
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from codetrial.records import TestOutcome, TestResult, Visibility
from codetrial.registry import Registry
from codetrial.sandbox import LimitHit, Session
from codetrial.syntax import compiled, turns
from codetrial.tasks import Task


@dataclass
class Recorder:
    """Per-test results of one run, as records."""

    visibility: Visibility
    collected: int = 0
    finished: bool = False
    results: list[TestResult] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every collected test ran and reported; nothing cut the run short."""
        return self.finished and self.collected > 0 and len(self.results) == self.collected


def proxy(session: Session, name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return session.call(name, list(args), kwargs)

    call.__name__ = call.__qualname__ = name
    return call


@functools.lru_cache(maxsize=4096)
def _compiled(source: str, name: str) -> types.CodeType:
    return compiled(source, name)


def _loaded(source: str, task: Task, name: str) -> types.CodeType:
    """The task's code compiled under a name of its own, its lines registered, so
    that tracebacks show them without looking for a file of that name."""
    where = f"{task.id}/{name}"
    linecache.cache[where] = (len(source), None, source.splitlines(True), where)
    return _compiled(source, where)


def run_check(task: Task, visibility: Visibility, session: Session) -> tuple[Recorder, str]:
    """Run the task's check code against the candidate: the test passes when it
    returns without raising. Compiled once per task and reused."""
    recorder = Recorder(visibility, collected=1)
    candidate = proxy(session, task.entry_point)
    outcome, exception, output = TestOutcome.PASSED, None, ""
    try:
        if task.entry_point not in session.functions:
            detail = session.load_error or f"{task.entry_point} is not defined"
            raise ImportError(f"cannot import name {task.entry_point!r}: {detail}")
        namespace: dict[str, object] = {"__name__": "__check__"}
        if task.context:
            exec(_loaded(task.context, task, "context.py"), namespace)
        namespace[task.entry_point] = candidate
        for test in task.tests_of(visibility):
            exec(_loaded(test.source, task, test.name), namespace)
        check = namespace.get("check")
        if callable(check):
            check(candidate)
    except (Exception, LimitHit) as exc:
        outcome = TestOutcome.FAILED if isinstance(exc, AssertionError) else TestOutcome.ERROR
        exception = type(exc).__name__
        output = _failure_text(exc, task)
    recorder.results.append(
        TestResult(name="check", visibility=visibility, outcome=outcome, exception_type=exception)
    )
    recorder.finished = True
    return recorder, output


def _failure_text(exc: BaseException, task: Task) -> str:
    """The failure as the check sees it: the check's own frames with their lines, then
    the exception (and what the candidate raised), without codetrial's frames."""
    chain = []
    tb = exc.__traceback__
    while tb is not None:
        chain.append(tb)
        tb = tb.tb_next
    frames = None
    for tb in reversed(chain):
        if tb.tb_frame.f_code.co_filename.startswith(f"{task.id}/"):
            frames = types.TracebackType(frames, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    with turns():
        return "".join(traceback.format_exception(type(exc), exc, frames))


Harness = Callable[[Task, Visibility, Session], tuple[Recorder, str]]
HARNESSES: Registry[Harness] = Registry("harness")
HARNESSES.register("check", run_check)  # "pytest" is declared in the package's __init__
