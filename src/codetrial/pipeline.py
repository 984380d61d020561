"""The trial loop, readable top to bottom; the only module that imports every stage.

    task -> prompt -> model -> response -> candidate -> gate -> sandbox -> verdict
                                     ^                                    |
                                     +-------- repair (visible only) <----+

A workspace task's candidate is its files as the response's edit leaves them (a
response whose edit cannot be applied is a malformed_edit, judged here); they go to
the sandbox, where the task's tests run beside them. A repository task is shown as a
workspace of the files retrieval picked (see `codetrial.localize`); its candidate is
the patch its edit makes to them, judged against the whole repository. The model
writes on this thread while finished candidates are judged on the pool's threads, so
generation and execution overlap.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field

from codetrial.config import RunConfig
from codetrial.edits import EDIT_FORMATS, EditFormat
from codetrial.errors import BackendError, BackendUnavailable, RepositoryError, SandboxError
from codetrial.extract import extract
from codetrial.gate import Profile
from codetrial.localize import Localized
from codetrial.models import Backend
from codetrial.models.base import continues_replies, decodes_together, generate_samples
from codetrial.prompts import (
    first_messages,
    judged_by_definitions,
    system_message,
    workspace_messages,
    workspace_system,
)
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
from codetrial.store import RunStore
from codetrial.tasks import JudgedTask, RepositoryTask, Task, WorkspaceTask
from codetrial.verdict.pool import JudgePool
from codetrial.verdict.workspace import apply_edit

Progress = Callable[[AttemptRecord], None]


def edit_format_of(config: RunConfig) -> EditFormat:
    return EDIT_FORMATS.get(config.edit_format or "whole")


def system_of(config: RunConfig, profile: Profile, task: JudgedTask) -> Message:
    """The system message: the gate's policy for a function task, the edit format for
    a workspace or repository task."""
    if isinstance(task, WorkspaceTask | RepositoryTask):
        return workspace_system(edit_format_of(config).template)
    return system_message(profile.allowed, profile.forbidden)


@dataclass(frozen=True)
class Trial:
    """Everything a trial needs besides the tasks and the backend."""

    config: RunConfig
    profile: Profile
    pool: JudgePool
    store: RunStore
    views: Mapping[str, Localized] = field(default_factory=dict)  # repository task id ->

    @property
    def edit_format(self) -> EditFormat:
        return edit_format_of(self.config)

    def shown(self, task: JudgedTask) -> Task | WorkspaceTask:
        """The task as the model sees it: a repository task through its view."""
        return self.views[task.id].view if isinstance(task, RepositoryTask) else task

    @property
    def definitions_only(self) -> bool:
        """Whether a function candidate is judged as its definitions alone (the prompt
        profile says)."""
        return judged_by_definitions(self.config.prompt_profile)

    def system(self, task: JudgedTask) -> Message:
        return system_of(self.config, self.pool.profile_for(task, self.profile), task)

    def opening(self, task: JudgedTask, continues: bool) -> list[Message]:
        """The messages of a task's first try, for a backend that `continues` a
        reply's start or not."""
        system = self.system(task)
        shown = self.shown(task)
        if isinstance(shown, WorkspaceTask):
            return workspace_messages(shown, system)
        return first_messages(shown, system, self.config.prompt_profile or "codetrial", continues)


@dataclass(frozen=True)
class Job:
    """One generation to make: a task's sample, at an attempt, with its prompt; for a
    workspace task, `workspace` is its files as the previous try left them."""

    task: JudgedTask
    sample: int
    attempt: int
    messages: Sequence[Message]
    workspace: dict[str, str] | None = None


@dataclass(frozen=True)
class Judging:
    job: Job
    generation: Generation
    candidate: Candidate
    started: float


def _infrastructure_failure(detail: str) -> Verdict:
    return Verdict(Outcome.INFRA_ERROR, gate=None, detail=detail)


def verdict_of(future: Future[Verdict]) -> Verdict:
    """The judged verdict; when the sandbox could not run the candidate, an infra_error
    verdict: a fault of the machinery, never of the model."""
    try:
        return future.result()
    except (SandboxError, RepositoryError) as exc:
        return _infrastructure_failure(str(exc))


def record(backend: Backend, job: Job, generation: Generation, candidate: Candidate,
           verdict: Verdict, execution_s: float) -> AttemptRecord:  # fmt: skip
    return AttemptRecord.judged(
        verdict, candidate, model=backend.name, task_id=job.task.id, sample=job.sample,
        attempt=job.attempt, messages=job.messages, generation=generation,
        execution_s=execution_s,
    )  # fmt: skip


def settled(verdict: Verdict) -> Future[Verdict]:
    """A verdict reached without the sandbox, as the pool's are delivered."""
    future: Future[Verdict] = Future()
    future.set_result(verdict)
    return future


def submit(
    pool: JudgePool, profile: Profile, edit_format: EditFormat, task: JudgedTask, text: str,
    workspace: dict[str, str] | None = None, view: Localized | None = None,
    definitions_only: bool = False,
) -> tuple[Candidate, Future[Verdict]]:  # fmt: skip
    """The candidate in a response (for a function task, with `definitions_only`, its
    code's definitions alone), and its verdict to come; a workspace task's
    response is applied to `workspace` (its files as the last try left them), a
    repository task's to its `view`'s excerpts, and judged as the patch that makes to
    the whole files."""
    if isinstance(task, RepositoryTask):
        assert view is not None
        candidate, malformed = view.candidate(text, edit_format, workspace)
        if malformed is not None:
            return candidate, settled(malformed)
        return candidate, pool.submit_repository(candidate.code or "", task)
    if isinstance(task, WorkspaceTask):
        files, malformed = apply_edit(text, task, edit_format, workspace)
        candidate = Candidate(text, None, files)
        if malformed is not None:
            return candidate, settled(malformed)
        return candidate, pool.submit_workspace(files, task)
    candidate = extract(text, task.entry_point, definitions_only)
    return candidate, pool.submit(candidate, task, profile)


def first_jobs(trial: Trial, tasks: Sequence[JudgedTask], backend: Backend) -> deque[list[Job]]:
    """Every (task, sample) chain still to do, in units generated at once: a task's
    first attempts when the backend decodes a prompt's samples together, else one job
    each. Stored attempts are never redone, except infrastructure failures, which say
    nothing about the model."""
    stored: dict[tuple[str, int], AttemptRecord] = {}
    for r in trial.store.attempts(backend.name):
        if r.outcome is not Outcome.INFRA_ERROR:
            stored[(r.task_id, r.sample)] = r
    jobs: list[Job] = []
    continues = continues_replies(backend)
    for sample in range(trial.config.samples):
        for task in tasks:
            previous = stored.get((task.id, sample))
            if previous is None:
                jobs.append(Job(task, sample, 0, trial.opening(task, continues)))
            elif needs_repair(previous, trial.config.repair_attempts):
                jobs.append(_repair_job(trial, task, previous))
    if not decodes_together(backend, trial.config.samples):
        return deque([job] for job in jobs)
    units: deque[list[Job]] = deque([job] for job in jobs if job.attempt > 0)
    firsts: dict[str, list[Job]] = {}
    for job in jobs:
        if job.attempt == 0:
            firsts.setdefault(job.task.id, []).append(job)
    units.extend(firsts.values())
    return units


def generations_for(trial: Trial, backend: Backend, unit: list[Job]) -> list[Generation]:
    """The unit's generations. First attempts decoded together are drawn with all of
    the run's samples, whichever of them the unit lacks, so that a resumed run draws
    exactly what an uninterrupted one drew."""
    first = unit[0]
    if first.attempt > 0 or not decodes_together(backend, trial.config.samples):
        return [backend.generate(first.messages, trial.config.options(first.sample))]
    options = [trial.config.options(sample) for sample in range(trial.config.samples)]
    drawn = generate_samples(backend, first.messages, options)
    return [drawn[job.sample] for job in unit]


def _repair_job(trial: Trial, task: JudgedTask, previous: AttemptRecord) -> Job:
    system = trial.system(task)
    return Job(task, previous.sample, previous.attempt + 1,
               repair_prompt(trial.shown(task), system, previous), previous.files)  # fmt: skip


def run_backend(
    trial: Trial, tasks: Sequence[JudgedTask], backend: Backend, progress: Progress
) -> None:
    """Generate on this thread, judge on the pool; a failed attempt with feedback
    queues its repair at the front. A failed request is an infra_error attempt; when
    the backend becomes unreachable or refuses the run's requests (BackendUnavailable,
    BackendRefused), generation stops and what is being judged is still stored before
    the error goes up; whatever else stops it (an interrupt during a generation) stores
    the attempts judged by then."""
    jobs = first_jobs(trial, tasks, backend)
    in_flight: dict[Future[Verdict], Judging] = {}
    limit = 2 * trial.pool.workers
    unavailable: BackendUnavailable | None = None

    def keep(future: Future[Verdict]) -> tuple[Judging, AttemptRecord]:
        judging = in_flight.pop(future)
        stored = record(backend, judging.job, judging.generation, judging.candidate,
                        verdict_of(future), time.monotonic() - judging.started)  # fmt: skip
        trial.store.save(judging.job.task, stored)
        progress(stored)
        return judging, stored

    try:
        while jobs or in_flight:
            if jobs and len(in_flight) < limit:
                unit = jobs.popleft()
                try:
                    generations = generations_for(trial, backend, unit)
                except BackendUnavailable as exc:
                    unavailable = exc
                    jobs.clear()
                    continue
                except BackendError as exc:
                    for job in unit:
                        failed = Generation("", None, None, 0.0)
                        stored = record(backend, job, failed, Candidate("", None),
                                        _infrastructure_failure(str(exc)), 0.0)  # fmt: skip
                        trial.store.save(job.task, stored)
                        progress(stored)
                    continue
                for job, generation in zip(unit, generations, strict=True):
                    candidate, future = submit(trial.pool, trial.profile, trial.edit_format,
                                               job.task, generation.text, job.workspace,
                                               trial.views.get(job.task.id),
                                               trial.definitions_only)  # fmt: skip
                    in_flight[future] = Judging(job, generation, candidate, time.monotonic())
                done = {f for f in in_flight if f.done()}
            else:
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                judging, stored = keep(future)
                if needs_repair(stored, trial.config.repair_attempts) and unavailable is None:
                    jobs.appendleft([_repair_job(trial, judging.job.task, stored)])
    finally:
        for future in [f for f in in_flight if f.done()]:
            keep(future)
    if unavailable is not None:
        raise unavailable


def run_trial(
    trial: Trial, tasks: Sequence[JudgedTask], backends: Sequence[Backend], progress: Progress
) -> list[TaskResult]:
    """Every task and sample for every model; BackendUnavailable (and so BackendRefused)
    stops the run, resumably."""
    for backend in backends:
        run_backend(trial, tasks, backend, progress)
    return trial.store.task_results()
