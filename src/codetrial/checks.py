"""Judging without a model: one file against one task, as a run judges a response, or
every task's reference solution (and the files a workspace or repository task starts
from, which must not pass)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from codetrial import environments
from codetrial.config import Limits
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import ConfigError
from codetrial.gate import Profile, get_profile
from codetrial.interpret import check_references as check_question_references
from codetrial.interpret import question_sandbox
from codetrial.pipeline import submit, verdict_of
from codetrial.prompts import judged_by_definitions, prompt_profile_for
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.tasks import (
    AnyTask,
    QuestionTask,
    RepositoryTask,
    WorkspaceTask,
    defaults_for,
    gate_for,
    load_suite,
)
from codetrial.verdict.pool import JudgePool


@dataclass(frozen=True)
class Where:
    """Where the tasks are and how to judge them."""

    suite: str = "contracts10"
    data: Path | None = None
    repos: Path | None = None
    wheels: Path | None = None
    gate: str | None = None
    timeout: float | None = None
    workers: int = 1
    unsafe_host_exec: bool = False


@dataclass(frozen=True)
class Checked:
    """A task's reference verdict (None without a reference) and the verdict on the
    files it starts from (None for a function task)."""

    task_id: str
    reference: Verdict | None
    start: Verdict | None

    @property
    def sound(self) -> bool:
        """The reference passes (if there is one) and the starting files do not."""
        passes = self.reference is None or self.reference.outcome is Outcome.PASSED
        return passes and (self.start is None or self.start.outcome is not Outcome.PASSED)


def _limits(tasks: Sequence[AnyTask], where: Where) -> Limits:
    """The limits a run of `tasks` defaults to, with the --timeout given."""
    defaults = defaults_for(tasks)
    return Limits.validated(
        defaults.timeout_s if where.timeout is None else where.timeout,
        scratch_mb=defaults.scratch_mb,
    )


@contextlib.contextmanager
def _judging(
    where: Where, task_ids: list[str] | None
) -> Iterator[tuple[list[AnyTask], Profile, JudgePool]]:
    tasks = load_suite(where.suite, task_ids, where.data)
    profile = get_profile(gate_for(tasks, where.gate))
    prepared = environments.for_tasks(tasks, where.repos, where.wheels, "codetrial check")
    pool = JudgePool(
        where.workers, _limits(tasks, where), where.unsafe_host_exec, prepared.repositories,
        prepared.libraries,
    )  # fmt: skip
    try:
        yield tasks, profile, pool
    finally:
        pool.close()


def check_file(
    text: str, task_id: str, where: Where, edit_format: str = "whole",
    prompt_profile: str | None = None,
) -> tuple[str, str, Verdict]:  # fmt: skip
    """(isolation, gate profile, verdict) of `text` judged against `task_id` as a run
    judges a response: its code extracted (for a benchmark task, as its prompt profile
    says), its edit applied to a workspace task's files in `edit_format`, or for a
    repository task the patch applied."""
    with _judging(where, [task_id]) as (tasks, profile, pool):
        (task,) = tasks
        asked = prompt_profile_for(tasks, where.suite, prompt_profile)
        if isinstance(task, QuestionTask):
            raise ConfigError(
                f"{task_id} is a question, answered by a program and a reply: check the "
                "suite's reference programs with --references, or ask it with `codetrial ask`"
            )
        if isinstance(task, RepositoryTask):
            future = pool.submit_repository(text, task)
        else:
            _, future = submit(pool, profile, EDIT_FORMATS.get(edit_format), task, text,
                               definitions_only=judged_by_definitions(asked))  # fmt: skip
        return pool.isolation, profile.name, verdict_of(future)


def check_references(where: Where) -> tuple[str, str, list[Checked]]:
    """(isolation, gate profile, a Checked per task) for every task of the suite."""
    tasks = load_suite(where.suite, None, where.data)
    questions = [t for t in tasks if isinstance(t, QuestionTask)]
    if questions:
        return _check_questions(questions, where)
    with _judging(where, None) as (tasks, profile, pool):
        pending = [(task.id, *_submitted(task, pool, profile)) for task in tasks]
        checked = [
            Checked(task_id, *(verdict_of(f) if f else None for f in (reference, start)))
            for task_id, reference, start in pending
        ]
        return pool.isolation, profile.name, checked


def _check_questions(questions: list[QuestionTask], where: Where) -> tuple[str, str, list[Checked]]:
    """Each question's reference program, run and its printed answer checked."""
    environment = environments.for_libraries(questions, where.wheels)[questions[0].id]
    limits = _limits(questions, where)
    with question_sandbox(questions, environment, limits, where.unsafe_host_exec) as sandbox:
        checked = [
            Checked(c.task_id, Verdict(Outcome.PASSED if c.correct else Outcome.FAILED,
                                       gate=None, detail=c.why), None)
            for c in check_question_references(questions, sandbox)
        ]  # fmt: skip
        return sandbox.isolation, "program", checked


def _submitted(
    task: AnyTask, pool: JudgePool, profile: Profile
) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
    """The reference's verdict and the starting files': a repository task's gold patch
    and its tests at the base commit; a workspace task's reference files and the files
    as given; a function task's reference."""
    if isinstance(task, RepositoryTask):
        start = pool.submit_repository("", task, baseline=True)
        return pool.submit_repository(task.gold_patch, task), start
    if isinstance(task, WorkspaceTask):
        start = pool.submit_workspace(dict(task.files), task)
        if not task.reference:
            return None, start
        return pool.submit_workspace(dict(task.files) | dict(task.reference), task), start
    if task.reference is None or isinstance(task, QuestionTask):
        return None, None
    return pool.submit(Candidate(task.reference, task.reference), task, profile), None
