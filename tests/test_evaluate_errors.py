"""`codetrial evaluate`: a sandbox that cannot judge one sample makes that sample an
infra_error, stored and counted; the other samples are judged as usual. A program that
repeats for a task is judged once."""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path

from codetrial.config import RunConfig
from codetrial.errors import SandboxError
from codetrial.executors.local import local_verdicts
from codetrial.gate import Profile, get_profile
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.report import figures
from codetrial.samples import judge_all, once_each, read_samples
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore, new_manifest
from codetrial.tasks import Task
from codetrial.tasks.jsonl import read_jsonl
from codetrial.verdict.pool import JudgePool
from tests.conftest import FAST_LIMITS

MODEL = "samples/samples.jsonl"
BROKEN = "the sandbox did not start: its worker could not be restarted"


class _SandboxFailsFor(JudgePool):
    """A real pool, except that the sandbox cannot start for one program: that
    program's verdict future holds a SandboxError, as the pool's would."""

    def __init__(self, program: str) -> None:
        super().__init__(1, SandboxPolicy(FAST_LIMITS))
        self._program = program

    def submit(self, candidate: Candidate, task: Task, profile: Profile) -> Future[Verdict]:
        if candidate.code != self._program:
            return super().submit(candidate, task, profile)
        future: Future[Verdict] = Future()
        future.set_exception(SandboxError(BROKEN))
        return future


def test_a_sandbox_error_is_an_infra_error_verdict(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    tasks = [contracts10["palindrome"], contracts10["two_sum"]]
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"task_id": t.id, "solution": t.reference}) + "\n" for t in tasks)
    )
    config = RunConfig(models=[MODEL], repair_attempts=0)
    store = RunStore.create(
        tmp_path / "run",
        new_manifest("r", config, tasks, backends={}, prompts={}, system_prompt="", isolation=""),
    )
    pool = _SandboxFailsFor(tasks[1].reference or "")
    try:
        items = read_samples(read_jsonl(samples), tasks)
        judged = local_verdicts(items, pool, get_profile("builtins-only"))
        verdicts = judge_all(items, MODEL, judged, store)
    finally:
        pool.close()

    assert [(v.outcome, v.detail) for v in verdicts] == [
        (Outcome.PASSED, ""),
        (Outcome.INFRA_ERROR, BROKEN),
    ]
    stored = [(a.task_id, a.outcome, a.detail) for a in store.attempts()]
    assert stored == [
        ("palindrome", Outcome.PASSED, ""),
        ("two_sum", Outcome.INFRA_ERROR, BROKEN),
    ]
    (row,) = figures(store).rows
    assert (row.tasks, row.first_pass, row.infra_errors) == (2, 1, 1)
    store.close()


class _Kept(JudgePool):
    """A real pool that keeps the task and program of each candidate it is given."""

    def __init__(self) -> None:
        super().__init__(1, SandboxPolicy(FAST_LIMITS))
        self.given: list[tuple[str, str | None]] = []

    def submit(self, candidate: Candidate, task: Task, profile: Profile) -> Future[Verdict]:
        self.given.append((task.id, candidate.code))
        return super().submit(candidate, task, profile)


def test_a_program_repeated_for_a_task_is_judged_once(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    palindrome, two_sum = contracts10["palindrome"], contracts10["two_sum"]
    right, wrong, other = (
        palindrome.reference or "",
        "def is_palindrome(text):\n    return False\n",
        two_sum.reference or "",
    )
    stray = "x = 1\n"
    lines = [
        (palindrome, right),
        (palindrome, wrong),
        (palindrome, right),
        (two_sum, other),
        (palindrome, wrong),
        (palindrome, stray),
        (two_sum, stray),
    ]
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"task_id": t.id, "solution": c}) + "\n" for t, c in lines)
    )
    pool = _Kept()
    try:
        items = read_samples(read_jsonl(samples), [palindrome, two_sum])
        profile = get_profile("builtins-only")
        verdicts = list(once_each(items, lambda unique: local_verdicts(unique, pool, profile)))
    finally:
        pool.close()

    passed, failed = Outcome.PASSED, Outcome.FAILED
    outcomes = [v.outcome for v in verdicts]
    assert outcomes[:5] == [passed, failed, passed, passed, failed]
    assert outcomes[5] is not passed and outcomes[6] is not passed
    assert pool.given == [
        ("palindrome", right),
        ("palindrome", wrong),
        ("two_sum", other),
        ("palindrome", stray),
        ("two_sum", stray),
    ]
