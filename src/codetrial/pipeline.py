"""The trial loop, readable top to bottom; the only module that imports every stage.

    task -> prompt -> model -> response -> candidate -> gate -> sandbox -> verdict
                                     ^                                    |
                                     +-------- repair (visible only) <----+

What a task is asked, how a response becomes a candidate and how that is judged, and
what a repair is asked, are its kind's (see `codetrial.kinds`): the loop asks the
kind. The model writes on this thread while finished candidates are judged on the
pool's threads, so generation and execution overlap.
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from codetrial.config import RunConfig
from codetrial.errors import BackendError, BackendUnavailable, ConfigError, Interrupted
from codetrial.gate import Profile, get_profile
from codetrial.harden.efficiency import measure as measure_efficiency
from codetrial.interpret import question_sandbox, run_questions
from codetrial.interpret.loop import system as interpret_system
from codetrial.kinds import Asked, kind_of, suite_kind
from codetrial.localize import Localized
from codetrial.models import Backend, create_backend
from codetrial.models.base import continues_replies, decodes_together, generate_samples
from codetrial.progress import Progress as RunProgress
from codetrial.prompts import template_hashes
from codetrial.records import (
    AttemptRecord,
    Candidate,
    Generation,
    Message,
    Outcome,
    TaskResult,
    Verdict,
)
from codetrial.repair import needs_repair
from codetrial.runs import Run
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore, new_manifest
from codetrial.store.manifest import with_environments
from codetrial.tasks import AnyTask, JudgedTask, QuestionTask, Task
from codetrial.verdict.pool import JudgePool, infrastructure_failure, verdict_of

Progress = Callable[[AttemptRecord], None]
_STABLE_CONDITIONS = ("model", "tag", "digest", "file_sha256", "kv_cache")


@dataclass(frozen=True)
class Trial:
    """Everything a trial needs besides the tasks and the backend."""

    config: RunConfig
    profile: Profile
    pool: JudgePool
    store: RunStore
    views: Mapping[str, Localized] = field(default_factory=dict)  # task id -> what is shown

    def asked(self, task: JudgedTask) -> Asked:
        return Asked.under(self.config, self.profile, self.views.get(task.id))

    def system(self, task: JudgedTask) -> Message:
        """The system message of a try, under the gate profile `task` is judged by."""
        return kind_of(task).system(self.config, self.pool.profile_for(task, self.profile))

    def opening(self, task: JudgedTask, continues: bool) -> list[Message]:
        """The messages of a task's first try, for a backend that `continues` a
        reply's start or not."""
        return kind_of(task).opening(task, self.asked(task), self.system(task), continues)


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


def record(
    backend: Backend,
    job: Job,
    generation: Generation,
    candidate: Candidate,
    verdict: Verdict,
    execution_s: float,
) -> AttemptRecord:
    return AttemptRecord.judged(
        verdict,
        candidate,
        model=backend.name,
        task_id=job.task.id,
        sample=job.sample,
        attempt=job.attempt,
        messages=job.messages,
        generation=generation,
        execution_s=execution_s,
    )


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
    messages = kind_of(task).repair(task, trial.asked(task), trial.system(task), previous)
    return Job(task, previous.sample, previous.attempt + 1, messages, previous.files)


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
        stored = record(
            backend,
            judging.job,
            judging.generation,
            judging.candidate,
            verdict_of(future),
            time.monotonic() - judging.started,
        )
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
                        stored = record(
                            backend,
                            job,
                            failed,
                            Candidate("", None),
                            infrastructure_failure(str(exc)),
                            0.0,
                        )
                        trial.store.save(job.task, stored)
                        progress(stored)
                    continue
                for job, generation in zip(unit, generations, strict=True):
                    candidate, future = kind_of(job.task).respond(
                        trial.pool,
                        job.task,
                        generation.text,
                        trial.asked(job.task),
                        job.workspace,
                    )
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


def _backends(
    config: RunConfig, opened: Mapping[str, Backend], resources: contextlib.ExitStack
) -> list[Backend]:
    """The run's models: those `opened` by the caller, the others created here and
    closed with `resources`."""
    backends = []
    for name in config.models:
        if name in opened:
            backends.append(opened[name])
        else:
            backends.append(create_backend(name, config.endpoints))
            resources.callback(backends[-1].close)
    return backends


def _check_resumable(store: RunStore, backends: list[Backend]) -> None:
    """Refuse to resume when a model is no longer what the run used."""
    run_dir, recorded = store.run_dir, store.manifest
    for backend in backends:
        before = recorded.backends.get(backend.name, {})
        now = backend.conditions()
        for key in _STABLE_CONDITIONS:
            if before.get(key) != now.get(key):
                raise ConfigError(
                    f"{backend.name}: {key} was {before.get(key)!r} when {run_dir} started and "
                    f"is {now.get(key)!r} now; start a new run"
                )


def conduct(
    config: RunConfig,
    tasks: Sequence[AnyTask],
    run_dir: Path,
    *,
    resume: bool,
    progress: RunProgress,
    opened: Mapping[str, Backend],
) -> None:
    """A trial of `config`'s models on `tasks`, stored in `run_dir` (with `resume`,
    the interrupted run there finished): the tasks' kind prepares what they need,
    each model writes and the sandbox judges, and every attempt is stored as it is
    judged. `opened`: models already loaded, by name, used and left open. An
    unreachable model (BackendUnavailable) or an interrupt stops the run resumably,
    with the command that resumes it."""
    profile = get_profile(config.gate_profile)
    policy = SandboxPolicy.of(config)
    kind = suite_kind(tasks)
    prepared = kind.prepare(tasks, config.repos, config.wheels, "codetrial run")
    shown = kind.views(tasks, config)
    with contextlib.ExitStack() as resources:
        backends = _backends(config, opened, resources)
        if kind.interpreted:
            questions = cast(list[QuestionTask], tasks)
            environment = prepared.libraries[questions[0].id]
            sandbox = resources.enter_context(question_sandbox(questions, environment, policy))
            if profile.rules:
                profile = profile.allowing(environment.modules)
            isolation, system = sandbox.isolation, interpret_system(environment.modules)
            bwrap = sandbox.bwrap.as_dict() if sandbox.bwrap else {}
        else:
            pool = resources.enter_context(
                JudgePool(config.workers, policy, prepared.repositories, prepared.libraries)
            )
            isolation, bwrap = pool.isolation, pool.bwrap
            system = kind.system(config, pool.profile_for(tasks[0], profile))
        if resume:
            store = resources.enter_context(RunStore.open(run_dir))
            _check_resumable(store, backends)
            store.mark_resumed()
        else:
            manifest = new_manifest(
                run_dir.name,
                config,
                tasks,
                backends={b.name: b.conditions() for b in backends},
                prompts=template_hashes(kind.templates(config)),
                system_prompt=system.content,
                isolation=isolation,
                bwrap=bwrap,
            )
            notes = {task_id: view.note for task_id, view in shown.items()}
            store = resources.enter_context(
                RunStore.create(run_dir, with_environments(manifest, prepared.environments, notes))
            )
        progress.start(store.run_dir, len(tasks) * len(config.labels) * config.samples)
        resume_with = f"codetrial run --resume {store.run_dir}"
        try:
            if kind.interpreted:
                run_questions(
                    questions,
                    backends,
                    config=config,
                    sandbox=sandbox,
                    profile=profile,
                    libraries=environment.modules,
                    store=store,
                    progress=progress.advance,
                )
            else:
                trial = Trial(config, profile, pool, store, shown)
                run_trial(trial, cast(list[JudgedTask], tasks), backends, progress.advance)
                if config.efficiency:
                    measured = cast(list[Task], tasks) if kind.measures_efficiency else []
                    measure_efficiency(store, measured, pool)
        except BackendUnavailable as exc:  # BackendRefused too, keeping its class and exit code
            report = Run(store.run_dir).report()
            raise type(exc)(
                f"{exc}\nfinished work is saved; continue with: {resume_with}\n"
                f"the report so far: {report}"
            ) from exc
        except KeyboardInterrupt as exc:
            raise Interrupted(
                f"interrupted; finished work is saved; continue with: {resume_with}"
            ) from exc
