"""How strong a task's tests are: the share of its reference's mutants they kill.

Each mutant runs, as any candidate does, in the sandbox against the task's visible
tests and, separately, its hidden tests, with the gate off (the mutants test the
tests, not the policy). A mutant is killed when a test fails or errs, or a limit
stops it. The reference itself must pass both, or the task's tests are reported as
unsound instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from codetrial.config import Limits
from codetrial.gate import get_profile
from codetrial.harden.mutants import Mutant, mutants
from codetrial.records import Candidate, Outcome, Verdict, Visibility
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool, verdict_of

AUDIT_TIMEOUT_S = 5.0
AUDIT_CPU_S = 2
Submitted = list[Future[Verdict] | None]  # under the visible tests, under the hidden


@dataclass(frozen=True)
class Judged:
    """One mutant's outcome under the visible tests and under the hidden ones (None
    where the task has none of that kind)."""

    mutant: Mutant
    visible: Outcome | None
    hidden: Outcome | None

    @property
    def unjudged(self) -> bool:
        """The sandbox failed to judge it (an infra_error): neither killed nor alive."""
        return Outcome.INFRA_ERROR in (self.visible, self.hidden)

    @property
    def killed(self) -> bool:
        return not self.unjudged and any(
            o not in (None, Outcome.PASSED) for o in (self.visible, self.hidden)
        )


@dataclass(frozen=True)
class TaskAudit:
    """A task's mutation scores, visible and hidden tests apart and together."""

    task_id: str
    reference: str
    judged: list[Judged]
    unsound: str = ""  # why the reference itself does not pass, when it does not

    def killed_by(self, visibility: Visibility) -> int | None:
        outcomes = [
            j.visible if visibility is Visibility.VISIBLE else j.hidden for j in self.judged
        ]
        if not outcomes or outcomes[0] is None:
            return None
        return sum(o not in (Outcome.PASSED, Outcome.INFRA_ERROR) for o in outcomes)

    @property
    def killed(self) -> int:
        return sum(j.killed for j in self.judged)

    @property
    def survivors(self) -> list[Mutant]:
        return [j.mutant for j in self.judged if not (j.killed or j.unjudged)]

    @property
    def unjudged(self) -> int:
        return sum(j.unjudged for j in self.judged)

    @property
    def score(self) -> float | None:
        """Killed out of the mutants the sandbox judged."""
        judged = len(self.judged) - self.unjudged
        return self.killed / judged if judged else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "mutants": len(self.judged),
            "killed_by_visible": self.killed_by(Visibility.VISIBLE),
            "killed_by_hidden": self.killed_by(Visibility.HIDDEN),
            "killed": self.killed,
            "unjudged": self.unjudged,
            "score": self.score,
            "unsound": self.unsound,
            "survivors": [
                {
                    "mutant": m.number,
                    "operator": m.operator,
                    "line": m.line,
                    "diff": m.diff(self.reference),
                }
                for m in self.survivors
            ],
        }


def _only(task: Task, visibility: Visibility) -> Task | None:
    tests = task.tests_of(visibility)
    return dataclasses.replace(task, tests=tests) if tests else None


def audit(
    tasks: Sequence[Task],
    workers: int = 2,
    timeout: float = AUDIT_TIMEOUT_S,
    unsafe_host_exec: bool = False,
) -> list[TaskAudit]:
    """Every task's mutation scores; tasks without a reference are left out."""
    profile = get_profile("off")
    policy = SandboxPolicy(Limits.validated(timeout, AUDIT_CPU_S), unsafe_host_exec)
    with JudgePool(workers, policy) as pool:
        pending = []
        unsound: list[TaskAudit] = []
        for task in tasks:
            if task.reference is None:
                continue
            parts = [_only(task, v) for v in (Visibility.VISIBLE, Visibility.HIDDEN)]

            def submit(code: str, parts: list[Task | None] = parts) -> Submitted:
                candidate = Candidate(code, code)
                return [pool.submit(candidate, p, profile) if p else None for p in parts]

            try:
                found = mutants(task.reference)
            except SyntaxError as exc:
                unsound.append(
                    TaskAudit(task.id, task.reference, [], f"the reference does not parse: {exc}")
                )
                continue
            pending.append((task, submit(task.reference), [(m, submit(m.source)) for m in found]))
        return unsound + [_collected(task, ref, judged) for task, ref, judged in pending]


def _outcome(future: Future[Verdict] | None) -> Outcome | None:
    return None if future is None else verdict_of(future).outcome


def _collected(
    task: Task, reference: Submitted, judged: list[tuple[Mutant, Submitted]]
) -> TaskAudit:
    own = [_outcome(f) for f in reference]
    failing = [o.value for o in own if o not in (None, Outcome.PASSED)]
    results = [Judged(m, *(_outcome(f) for f in futures)) for m, futures in judged]
    unsound = f"the reference itself gets {', '.join(failing)}" if failing else ""
    return TaskAudit(task.id, task.reference or "", [] if unsound else results, unsound)
