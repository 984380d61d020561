"""The trial loop, readable top to bottom; the only module that imports every stage.

    task -> prompt -> model -> response -> candidate -> gate -> sandbox -> verdict
                                     ^                                    |
                                     +-------- repair (visible only) <----+

What a task is asked, how a response becomes a candidate and how that is judged, and
what a repair is asked, are its kind's (see `codetrial.kinds`): the loop asks the
kind. A verdict may ask the model one more thing before it is final (a question's
program ran: what is the answer?); the model's reply goes back to the kind, in the
same try. The model writes on this thread while finished candidates are judged on the
pool's threads, so generation and execution overlap. Questions are asked once in each
of the run's modes, each its own pass of the loop.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from codetrial.config import RunConfig
from codetrial.errors import BackendError, BackendUnavailable, ConfigError, Interrupted
from codetrial.gate import Profile, get_profile
from codetrial.harden.efficiency import measure as measure_efficiency
from codetrial.kinds import Asked, Suite, kind_of
from codetrial.localize import Localized
from codetrial.models import Backend, create_backend
from codetrial.models.base import DecodesTogether, continues_replies, decodes_together
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
from codetrial.repair import cut_off, needs_repair
from codetrial.runs import Run
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore, new_manifest
from codetrial.store.manifest import with_environments
from codetrial.tasks import AnyTask, Task
from codetrial.verdict.pool import JudgePool, request_failure, settled, verdict_of

Progress = Callable[[AttemptRecord], None]
_STABLE_CONDITIONS = ("model", "tag", "digest", "file_sha256", "kv_cache")


def system_of(config: RunConfig, profile: Profile, pool: JudgePool, task: AnyTask) -> Message:
    """The system message of a try at `task`, under the gate profile it is judged by
    in `pool`, given the run's `profile`."""
    libraries = pool.libraries_of(task)
    return kind_of(task).system(config, pool.profile_for(task, profile), libraries)


@dataclass(frozen=True)
class Trial:
    """Everything a trial needs besides the tasks and the backend; `mode`: how
    questions are answered in it (None for other tasks)."""

    config: RunConfig
    profile: Profile
    pool: JudgePool
    store: RunStore
    views: Mapping[str, Localized] = field(default_factory=dict)  # task id -> what is shown
    mode: str | None = None

    def repairs(self, task: AnyTask) -> int:
        return kind_of(task).repairs(self.config, self.mode)

    def asked(self, task: AnyTask, attempt: int = 0) -> Asked:
        """How `task` is asked and judged at `attempt`."""
        asked = Asked.under(self.config, self.profile, self.views.get(task.id))
        last = attempt >= self.repairs(task)
        return dataclasses.replace(asked, mode=self.mode, last=last, inputs=self.pool.inputs)

    def system(self, task: AnyTask) -> Message:
        return system_of(self.config, self.profile, self.pool, task)

    def opening(self, task: AnyTask, continues: bool) -> list[Message]:
        """The messages of a task's first try, for a backend that `continues` a
        reply's start or not."""
        return kind_of(task).opening(task, self.asked(task), self.system(task), continues)


@dataclass(frozen=True)
class Job:
    """One generation to make: a task's sample, at an attempt, with its prompt; for a
    workspace task, `workspace` is its files as the previous try left them; a job
    that `follows` a judged try is the model's reply to what its verdict asks."""

    task: AnyTask
    sample: int
    attempt: int
    messages: Sequence[Message]
    workspace: dict[str, str] | None = None
    follows: Awaiting | None = None


@dataclass(frozen=True)
class Judging:
    """A try being judged, since `started`, after `spent` seconds judging it before;
    `ended` once its verdict came."""

    job: Job
    generation: Generation
    candidate: Candidate
    started: float
    spent: float = 0.0
    ended: float | None = None

    @property
    def seconds(self) -> float:
        """The seconds the try was judged: until its verdict came, not until the loop,
        busy generating, next looked."""
        ended = time.monotonic() if self.ended is None else self.ended
        return self.spent + ended - self.started


@dataclass(frozen=True)
class Awaiting:
    """A judged try whose verdict awaits the model's reply to what it asks."""

    judging: Judging
    verdict: Verdict


def record(
    trial: Trial,
    backend: Backend,
    job: Job,
    judging: Judging,
    verdict: Verdict,
) -> AttemptRecord:
    """The stored attempt; a reply cut off at a token limit is said to be in its
    detail and feedback (for a question's try, its program's reply: the first)."""
    first = job.follows.judging.generation if job.follows else judging.generation
    verdict = cut_off(verdict, first, trial.config.options(job.sample))
    return AttemptRecord.judged(
        verdict,
        judging.candidate,
        model=backend.name,
        mode=trial.mode,
        task_id=job.task.id,
        sample=job.sample,
        attempt=job.attempt,
        messages=job.messages,
        generation=judging.generation,
        execution_s=judging.seconds,
    )


# Tasks whose first attempts are drawn as one stream, when the backend decodes
# together: enough to keep its batch full while one task's samples end.
TASKS_TOGETHER = 4


@dataclass(frozen=True)
class Unit:
    """Jobs generated at once: alone, or the first attempts of `drawn_with`'s tasks,
    which are drawn together (all their samples, whichever the jobs lack)."""

    jobs: list[Job]
    drawn_with: Sequence[AnyTask] = ()


def first_jobs(trial: Trial, tasks: Sequence[AnyTask], backend: Backend) -> deque[Unit]:
    """Every (task, sample) chain still to do, in units generated at once: the first
    attempts of consecutive tasks, `TASKS_TOGETHER` at a time, when the backend
    decodes a prompt's samples together, else one job each. Stored attempts are
    never redone, except infrastructure failures, which say nothing about the model."""
    stored: dict[tuple[str, int], AttemptRecord] = {}
    for r in trial.store.attempts(backend.name, trial.mode):
        if r.outcome is not Outcome.INFRA_ERROR:
            stored[(r.task_id, r.sample)] = r
    jobs: list[Job] = []
    continues = continues_replies(backend)
    for sample in range(trial.config.samples):
        for task in tasks:
            previous = stored.get((task.id, sample))
            if previous is None:
                jobs.append(Job(task, sample, 0, trial.opening(task, continues)))
            elif needs_repair(previous, trial.repairs(task)):
                jobs.append(_repair_job(trial, task, previous))
    if not decodes_together(backend, trial.config.samples):
        return deque(Unit([job]) for job in jobs)
    units: deque[Unit] = deque(Unit([job]) for job in jobs if job.attempt > 0)
    firsts: dict[str, list[Job]] = {}
    for job in jobs:
        if job.attempt == 0:
            firsts.setdefault(job.task.id, []).append(job)
    for start in range(0, len(tasks), TASKS_TOGETHER):
        chunk = tasks[start : start + TASKS_TOGETHER]
        unit = [job for task in chunk for job in firsts.get(task.id, [])]
        if unit:
            units.append(Unit(unit, chunk))
    return units


def generations_for(trial: Trial, backend: Backend, unit: Unit) -> list[Generation]:
    """The unit's generations. First attempts decoded together are drawn with all of
    the run's samples of all the tasks drawn with them, whichever of them the unit
    lacks, so that a resumed run draws exactly what an uninterrupted one drew."""
    if not unit.drawn_with:
        first = unit.jobs[0]
        return [backend.generate(first.messages, trial.config.options(first.sample))]
    assert isinstance(backend, DecodesTogether)
    options = [trial.config.options(sample) for sample in range(trial.config.samples)]
    continues = continues_replies(backend)
    requests = [(trial.opening(task, continues), options) for task in unit.drawn_with]
    drawn = dict(zip((t.id for t in unit.drawn_with), backend.generate_many(requests), strict=True))
    return [drawn[job.task.id][job.sample] for job in unit.jobs]


def _repair_job(trial: Trial, task: AnyTask, previous: AttemptRecord) -> Job:
    asked = trial.asked(task, previous.attempt + 1)
    messages = kind_of(task).repair(task, asked, trial.system(task), previous)
    return Job(task, previous.sample, previous.attempt + 1, messages, previous.files)


def _reply_job(awaiting: Awaiting) -> Job:
    """The job of the model's reply to what `awaiting`'s verdict asks."""
    job, asks = awaiting.judging.job, awaiting.verdict.asks or ""
    said = Message("assistant", awaiting.judging.generation.text)
    messages = [*job.messages, said, Message("user", asks)]
    return dataclasses.replace(job, messages=messages, follows=awaiting)


def _judged(trial: Trial, job: Job, generation: Generation) -> tuple[Judging, Future[Verdict]]:
    """A generation's try, and its verdict to come: the candidate in it judged, or, for
    a reply to what a verdict asked, that verdict made final."""
    started, task = time.monotonic(), job.task
    kind = kind_of(task)
    if job.follows is None:
        asked = trial.asked(task, job.attempt)
        candidate, future = kind.respond(trial.pool, task, generation.text, asked, job.workspace)
        return Judging(job, generation, candidate, started), future
    before = job.follows
    final = settled(kind.answered(task, before.verdict, generation.text))
    joined = before.judging.generation.then(generation)
    return Judging(job, joined, before.judging.candidate, started, before.judging.seconds), final


def _verdict_when(judging: Judging, future: Future[Verdict]) -> Future[tuple[Judging, Verdict]]:
    """The try with the moment its verdict came, and that verdict (see `verdict_of`):
    the loop may notice it only after its next generation."""
    timed: Future[tuple[Judging, Verdict]] = Future()

    def settle(done: Future[Verdict]) -> None:
        ended = dataclasses.replace(judging, ended=time.monotonic())
        try:
            timed.set_result((ended, verdict_of(done)))
        except Exception as exc:
            timed.set_exception(exc)

    future.add_done_callback(settle)
    return timed


def run_backend(
    trial: Trial, tasks: Sequence[AnyTask], backend: Backend, progress: Progress
) -> None:
    """Generate on this thread, judge on the pool; a failed attempt with feedback
    queues its repair at the front, and a verdict that asks the model something queues
    that. A failed request is an infra_error attempt (an overflow when the prompt
    cannot fit the model's context window); when the backend becomes
    unreachable or refuses the run's requests (BackendUnavailable, BackendRefused),
    generation stops and what is being judged is still stored before the error goes
    up; whatever else stops it (an interrupt during a generation) stores the attempts
    judged by then."""
    jobs = first_jobs(trial, tasks, backend)
    in_flight: set[Future[tuple[Judging, Verdict]]] = set()
    limit = 2 * trial.pool.workers
    unavailable: BackendUnavailable | None = None

    def keep(judging: Judging, verdict: Verdict) -> None:
        job = judging.job
        if verdict.asks is not None:
            if unavailable is None:
                jobs.appendleft(Unit([_reply_job(Awaiting(judging, verdict))]))
            return
        stored = record(trial, backend, job, judging, verdict)
        trial.store.save(job.task, stored, verdict.written)
        progress(stored)
        if needs_repair(stored, trial.repairs(job.task)) and unavailable is None:
            jobs.appendleft(Unit([_repair_job(trial, job.task, stored)]))

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
                    for job in unit.jobs:
                        failed = Generation("", None, None, 0.0)
                        judging = Judging(job, failed, Candidate("", None), time.monotonic())
                        keep(judging, request_failure(exc))
                    continue
                for job, generation in zip(unit.jobs, generations, strict=True):
                    in_flight.add(_verdict_when(*_judged(trial, job, generation)))
                done = {f for f in in_flight if f.done()}
            else:
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                in_flight.remove(future)
                keep(*future.result())
    finally:
        for future in [f for f in in_flight if f.done()]:
            in_flight.remove(future)
            keep(*future.result())
    if unavailable is not None:
        raise unavailable


def run_trial(
    trial: Trial, tasks: Sequence[AnyTask], backends: Sequence[Backend], progress: Progress
) -> list[TaskResult]:
    """Every task and sample for every model (for questions, in each of the run's
    modes); BackendUnavailable (and so BackendRefused) stops the run, resumably."""
    for backend in backends:
        modes: list[str | None] = [*trial.config.modes] or [None]
        for mode in modes:
            run_backend(dataclasses.replace(trial, mode=mode), tasks, backend, progress)
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
    tasks: Suite[Any],
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
    kind = tasks.kind
    prepared = kind.prepare(tasks, config.repos, config.wheels, "codetrial run")
    shown = kind.views(tasks, config)
    with contextlib.ExitStack() as resources:
        backends = _backends(config, opened, resources)
        pool = resources.enter_context(
            JudgePool.for_tasks(config.workers, SandboxPolicy.of(config), prepared)
        )
        if resume:
            store = resources.enter_context(RunStore.open(run_dir))
            _check_resumable(store, backends)
            store.mark_resumed()
            tasks = kind.recalled(tasks, store.manifest.model_dump())
        else:
            tasks = kind.timed(tasks, pool, factor=config.time_factor, floor=config.time_floor)
            manifest = new_manifest(
                run_dir.name,
                config,
                tasks,
                backends={b.name: b.conditions() for b in backends},
                prompts=template_hashes(kind.templates(config)),
                system_prompt=system_of(config, profile, pool, tasks[0]).content,
                isolation=pool.isolation,
                bwrap=pool.bwrap,
                toolchains=pool.toolchains,
            )
            notes = {task_id: view.note for task_id, view in shown.items()}
            store = resources.enter_context(
                RunStore.create(run_dir, with_environments(manifest, prepared.environments, notes))
            )
        progress.start(store.run_dir, len(tasks) * len(config.labels) * config.samples)
        resume_with = f"codetrial run --resume {store.run_dir}"
        try:
            trial = Trial(config, profile, pool, store, shown)
            run_trial(trial, tasks, backends, progress.advance)
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
