"""The trial loop, readable top to bottom; the only module that imports every stage.

task -> prompt -> model -> response -> candidate -> gate -> sandbox -> verdict
                                 ^                                    |
                                 +-------- repair (visible only) <----+
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from codetrial.config import RunConfig
from codetrial.errors import BackendError, SandboxError
from codetrial.extract import extract
from codetrial.gate import Profile
from codetrial.models import Backend
from codetrial.prompts import first_messages, system_message
from codetrial.records import (
    AttemptRecord,
    Candidate,
    Generation,
    Message,
    Outcome,
    TaskResult,
    Verdict,
)
from codetrial.repair import needs_repair, repair_prompt
from codetrial.sandbox import Sandbox
from codetrial.store import RunStore
from codetrial.tasks import Task
from codetrial.verdict import judge

Progress = Callable[[str, str, AttemptRecord], None]


@dataclass(frozen=True)
class Trial:
    """Everything a trial needs besides the tasks and the backend."""

    config: RunConfig
    profile: Profile
    sandbox: Sandbox
    store: RunStore

    @property
    def system(self) -> Message:
        return system_message(self.profile.allowed, self.profile.forbidden)


def _infrastructure_failure(detail: str) -> Verdict:
    return Verdict(Outcome.INFRA_ERROR, gate=None, detail=detail)


def attempt(
    trial: Trial, task: Task, backend: Backend, messages: Sequence[Message], number: int
) -> AttemptRecord:
    """One generation, extraction and verdict, as a record ready to store."""
    try:
        generation = backend.generate(messages, trial.config.options)
    except BackendError as exc:
        generation = Generation("", None, None, 0.0)
        candidate, verdict = Candidate("", None), _infrastructure_failure(str(exc))
        execution_s = 0.0
    else:
        candidate = extract(generation.text, task.entry_point)
        started = time.monotonic()
        try:
            verdict = judge(candidate, task, trial.profile, trial.sandbox, trial.config.limits)
        except SandboxError as exc:
            verdict = _infrastructure_failure(str(exc))
        execution_s = time.monotonic() - started
    return AttemptRecord(
        model=backend.name,
        task_id=task.id,
        attempt=number,
        messages=[{"role": m.role, "content": m.content} for m in messages],
        raw_response=generation.text,
        code=candidate.code,
        gate_allowed=verdict.gate.allowed if verdict.gate else None,
        gate_rule=verdict.gate.rule_id if verdict.gate else None,
        gate_message=verdict.gate.message if verdict.gate else None,
        outcome=verdict.outcome,
        tests=list(verdict.tests),
        visible_output=verdict.visible_output,
        hidden_output=verdict.hidden_output,
        detail=verdict.detail,
        feedback=verdict.feedback,
        prompt_tokens=generation.prompt_tokens,
        completion_tokens=generation.completion_tokens,
        generation_s=generation.duration_s,
        execution_s=execution_s,
    )


def run_task(trial: Trial, task: Task, backend: Backend, progress: Progress) -> None:
    """First attempt, then repairs while allowed; stored attempts are never redone,
    except infrastructure failures, which say nothing about the model."""
    stored = [
        r
        for r in trial.store.attempts(backend.name, task.id)
        if r.outcome is not Outcome.INFRA_ERROR
    ]
    previous = stored[-1] if stored else None
    if previous is None:
        previous = attempt(trial, task, backend, first_messages(task, trial.system), 0)
        trial.store.save(task, previous)
        progress(backend.name, task.id, previous)
    while needs_repair(previous, trial.config.repair_attempts):
        messages = repair_prompt(task, trial.system, previous)
        previous = attempt(trial, task, backend, messages, previous.attempt + 1)
        trial.store.save(task, previous)
        progress(backend.name, task.id, previous)


def run_trial(
    trial: Trial, tasks: Sequence[Task], backends: Sequence[Backend], progress: Progress
) -> list[TaskResult]:
    """Every task for every model; BackendUnavailable stops the run (resumable)."""
    for backend in backends:
        for task in tasks:
            run_task(trial, task, backend, progress)
    return trial.store.task_results()
