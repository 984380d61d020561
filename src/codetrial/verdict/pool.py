"""Parallel verdicts: one warm sandbox per worker, candidates judged in threads.

The threads mostly wait on the sandboxed children, so `--workers N` uses N cores
for candidate code while the caller keeps generating.
"""

from __future__ import annotations

import queue
from concurrent.futures import Future, ThreadPoolExecutor

from codetrial.config import Limits
from codetrial.gate import Profile
from codetrial.records import Candidate, Verdict
from codetrial.sandbox import Sandbox, open_sandbox
from codetrial.tasks import Task
from codetrial.verdict import judge
from codetrial.verdict.harness import run_assertions


class JudgePool:
    def __init__(self, workers: int, limits: Limits, unsafe_host_exec: bool = False) -> None:
        self.limits = limits
        self._free: queue.Queue[Sandbox] = queue.Queue()
        self._sandboxes = []
        try:
            for _ in range(max(1, workers)):
                sandbox = open_sandbox(limits, unsafe_host_exec)
                self._sandboxes.append(sandbox)
                self._free.put(sandbox)
        except BaseException:
            self.close()
            raise
        self._executor = ThreadPoolExecutor(max_workers=len(self._sandboxes))

    @property
    def workers(self) -> int:
        return len(self._sandboxes)

    @property
    def isolation(self) -> str:
        return self._sandboxes[0].isolation

    def _judge(self, candidate: Candidate, task: Task, profile: Profile) -> Verdict:
        sandbox = self._free.get()
        try:
            return judge(candidate, task, profile, sandbox, self.limits)
        finally:
            self._free.put(sandbox)

    def submit(self, candidate: Candidate, task: Task, profile: Profile) -> Future[Verdict]:
        return self._executor.submit(self._judge, candidate, task, profile)

    def _assertions(
        self, code: str, task: Task, assertions: list[str], per_test_s: float | None
    ) -> list[bool]:
        sandbox = self._free.get()
        passed: list[bool] = []
        try:
            while len(passed) < len(assertions):
                with sandbox.session(task.program(code), self.limits) as session:
                    rest = assertions[len(passed) :]
                    more, stopped = run_assertions(task, session, rest, per_test_s)
                passed.extend(more)
                if not stopped:
                    break
        finally:
            self._free.put(sandbox)
        return passed

    def submit_assertions(
        self, code: str, task: Task, assertions: list[str], per_test_s: float | None = None
    ) -> Future[list[bool]]:
        """Which of `assertions` the candidate passes, each within `per_test_s` wall
        seconds when given. A fresh process takes over after one stops the candidate,
        so a loop on one test does not fail the rest."""
        return self._executor.submit(self._assertions, code, task, assertions, per_test_s)

    def close(self) -> None:
        if hasattr(self, "_executor"):
            self._executor.shutdown(wait=True, cancel_futures=True)
        for sandbox in self._sandboxes:
            sandbox.close()
