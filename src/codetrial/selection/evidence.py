"""What the strategies know about each candidate, gathered from a run and cached in
its `selection/` folder: generated tests each candidate passes, its outputs on the
inputs those tests use, and a judge's confidence. Hidden verdicts only label.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codetrial.literals import literal_calls
from codetrial.records import AttemptRecord, Outcome, TestOutcome, Visibility
from codetrial.store.artifacts import read_json, write_atomic
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool

SAVE_INTERVAL_S = 10.0  # a long pass over candidates keeps what it computed this often


class Keeper:
    """Keeps a long pass's results as it goes: `save` once SAVE_INTERVAL_S have passed
    since it last kept them, and at the end (`close`), and tells `computed` how many
    each save kept. Timed, not counted: a pass of fast executions rewrites its cache
    a few times, not once per few dozen items."""

    def __init__(self, save: Callable[[], None], computed: Callable[[int], None]) -> None:
        self._save, self._computed = save, computed
        self._unsaved = 0
        self._kept_at = time.monotonic()

    def one(self) -> None:
        """One more result, not yet kept."""
        self._unsaved += 1
        if time.monotonic() - self._kept_at >= SAVE_INTERVAL_S:
            self.close()

    def close(self) -> None:
        if self._unsaved:
            self._save()
            self._computed(self._unsaved)
            self._unsaved = 0
        self._kept_at = time.monotonic()


MAX_INPUTS = 20
CPU_PER_TEST_S = 0.1
_UNEXECUTED = (Outcome.NO_CODE, Outcome.SYNTAX_ERROR, Outcome.REJECTED)


@dataclass(frozen=True)
class Entry:
    """One candidate of a run, as selection sees it: its first attempt."""

    task: Task
    record: AttemptRecord

    @property
    def runnable(self) -> bool:
        return self.record.code is not None and self.record.outcome not in _UNEXECUTED

    @property
    def visible_passed(self) -> int:
        visible = (t for t in self.record.tests if t.visibility is Visibility.VISIBLE)
        return sum(t.outcome is TestOutcome.PASSED for t in visible)

    @property
    def visible_total(self) -> int:
        return sum(t.visibility is Visibility.VISIBLE for t in self.record.tests)

    @property
    def visible_outcome(self) -> str:
        """The outcome of the visible tests alone ("none" without visible tests).
        Hidden tests run only after the visible ones pass, so a candidate that failed a
        visible test has the outcome of its visible run."""
        if self.record.outcome in _UNEXECUTED:
            return self.record.outcome.value
        visible = [t for t in self.record.tests if t.visibility is Visibility.VISIBLE]
        if not visible:
            return "none"
        if all(t.outcome is TestOutcome.PASSED for t in visible):
            return "passed"
        return self.record.outcome.value

    @property
    def visible_error(self) -> str | None:
        """The exception type of the first visible test that did not pass."""
        for test in self.record.tests:
            if test.visibility is Visibility.VISIBLE and test.outcome is not TestOutcome.PASSED:
                return test.exception_type
        return None


def generated_inputs(tests: Sequence[str], entry_point: str) -> list[list[Any]]:
    """Argument lists of the calls to the entry point in generated tests, where every
    argument is a literal (read with ast.literal_eval, nothing executed); distinct,
    in order of first appearance, at most MAX_INPUTS."""
    return literal_calls(tests, {entry_point})[:MAX_INPUTS]


@dataclass(frozen=True)
class Execution:
    """A candidate against its task's generated tests and inputs."""

    passed_tests: tuple[str, ...]
    outputs: tuple[str, ...] | None


def execute(
    entries: Sequence[Entry],
    tests: dict[str, list[str]],
    pool: JudgePool,
    cache: Path,
    *,
    outputs: bool = True,
    progress: Callable[[int], None] = lambda done: None,
    computed: Callable[[int], None] = lambda items: None,
) -> dict[tuple[str, str], Execution]:
    """(task id, code) -> its execution, for every runnable candidate; identical code
    runs once. Outputs on the tests' inputs are gathered only when asked for. Results
    are kept in `cache` (a JSON file) and reused while the task's tests are the same;
    `computed` is told how many were run as they are kept."""
    known = read_json(cache, dict)
    digests = {task_id: _digest(tests.get(task_id, [])) for task_id in {e.task.id for e in entries}}

    def current(key: tuple[str, str]) -> dict[str, Any] | None:
        """The cached execution of this (task id, code), if it ran the same tests."""
        found = known.get(cache_key(key))
        return found if found is not None and found.get("tests") == digests[key[0]] else None

    futures: dict[
        tuple[str, str], tuple[list[str], Future[list[bool]], Future[list[str]] | None]
    ] = {}
    per_task: dict[str, tuple[list[str], list[list[Any]]]] = {}
    for entry in entries:
        code = entry.record.code
        key = (entry.task.id, code or "")
        found = current(key)
        reusable = found is not None and (not outputs or found["outputs"] is not None)
        if code is None or not entry.runnable or key in futures or reusable:
            continue
        if entry.task.id not in per_task:
            task_tests = sorted(set(tests.get(entry.task.id, [])))
            inputs = generated_inputs(task_tests, entry.task.entry_point) if outputs else []
            per_task[entry.task.id] = task_tests, inputs
        task_tests, inputs = per_task[entry.task.id]
        futures[key] = (
            task_tests,
            pool.submit_tests(code, entry.task, task_tests, CPU_PER_TEST_S),
            pool.submit_outputs(code, entry.task, inputs, CPU_PER_TEST_S) if outputs else None,
        )
    keeper = Keeper(lambda: write_atomic(cache, json.dumps(known)), computed)
    for done, (key, (task_tests, passed, outputs_run)) in enumerate(futures.items(), 1):
        flags = passed.result()
        known[cache_key(key)] = {
            "tests": digests[key[0]],
            "passed_tests": [t for t, ok in zip(task_tests, flags, strict=False) if ok],
            "outputs": outputs_run.result() if outputs_run else None,
        }
        keeper.one()
        progress(done)
    keeper.close()
    executions = {}
    for entry in entries:
        key = (entry.task.id, entry.record.code or "")
        if (found := current(key)) is not None:
            executions[key] = Execution(
                tuple(found["passed_tests"]), tuple(found["outputs"] or ()) or None
            )
    return executions


def cache_key(key: tuple[str, str]) -> str:
    """A (task id, code) pair as a JSON object key in a `selection/` cache file."""
    return json.dumps(key)


def _digest(tests: Sequence[str]) -> str:
    """Which set of generated tests an execution ran against."""
    return hashlib.sha256("\0".join(sorted(set(tests))).encode()).hexdigest()
