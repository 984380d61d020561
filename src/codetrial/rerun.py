"""Re-judge a stored run from its store alone: no model is called.

Every stored candidate goes through the gate and the sandbox again, under the run's
recorded conditions unless the caller overrides some (a "what if" question: a program
task's time limits are always the ones recorded, never measured again), and its
verdict is compared with the stored one: the same outcome and the same per-test
outcomes. A workspace response is applied again, in the run's edit format, to the
files the try before it left. Nothing is written to the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.gate import Profile, get_profile
from codetrial.kinds import Asked, kind_of, stored_tasks
from codetrial.localize import Localized
from codetrial.records import AttemptRecord, Outcome, TestResult, Verdict
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore
from codetrial.tasks import AnyTask
from codetrial.verdict.pool import JudgePool, verdict_of

FIRST, REPAIR = "first", "repair"


@dataclass(frozen=True)
class Difference:
    """A stored verdict that came out otherwise this time."""

    model: str
    task_id: str
    sample: int
    attempt: int
    stored: Outcome
    now: Outcome
    detail: str


@dataclass
class Tally:
    """One model's attempts at one stage: first attempts or repairs."""

    model: str
    stage: str
    judged: int = 0
    identical: int = 0
    not_rejudged: int = 0


@dataclass(frozen=True)
class Rerun:
    tallies: list[Tally]
    differences: list[Difference]
    changed_conditions: dict[str, tuple[str, str]]
    isolation: str

    @property
    def identical(self) -> bool:
        return not self.differences


def _stage(record: AttemptRecord) -> str:
    return FIRST if record.attempt == 0 else REPAIR


def _tests(tests: Sequence[TestResult]) -> list[tuple[str, str, str]]:
    return [(t.name, t.visibility.value, t.outcome.value) for t in tests]


def same_verdict(record: AttemptRecord, verdict: Verdict) -> bool:
    """The same outcome and the same outcome for every test; timings may differ."""
    return record.outcome is verdict.outcome and _tests(record.tests) == _tests(verdict.tests)


def changed_conditions(
    store: RunStore, limits: Limits, profile: Profile, isolation: str, bwrap: dict[str, str]
) -> dict[str, tuple[str, str]]:
    """Each condition that differs from the run's record: name -> (recorded, now); a
    bubblewrap binary counts as changed when both are known and their hashes differ."""
    manifest = store.manifest
    recorded = manifest.config.limits.model_dump()
    changed = {
        f"limits.{name}": (str(recorded[name]), str(value))
        for name, value in limits.model_dump().items()
        if recorded.get(name) != value
    }
    if profile.name != manifest.config.gate_profile:
        changed["gate_profile"] = (manifest.config.gate_profile, profile.name)
    if isolation != manifest.isolation:
        changed["isolation"] = (manifest.isolation, isolation)
    before = manifest.bwrap
    if before and bwrap and before["sha256"] != bwrap["sha256"]:
        was, now = (f"{b['source']} {b['version']} ({b['path']})" for b in (before, bwrap))
        changed["bwrap"] = (was, now)
    return changed


def rerun(
    store: RunStore,
    profile: Profile,
    pool: JudgePool,
    tasks: Sequence[AnyTask],
    views: Mapping[str, Localized] = {},
) -> Rerun:
    """Re-judge every stored attempt that was judged (an infrastructure failure or an
    overflow never reached the sandbox, so it is counted as not re-judged) and compare verdicts.
    `tasks` are the run's, as `stored_tasks` loads them; `views` what the model was
    shown of each repository task."""
    by_id = {t.id: t for t in tasks}
    config = store.manifest.config
    asked = {t.id: Asked.under(config, profile, views.get(t.id)) for t in tasks}
    tallies: dict[tuple[str, str], Tally] = {}
    pending: list[tuple[AttemptRecord, Future[Verdict]]] = []
    left: dict[tuple[str, str, int], dict[str, str] | None] = {}  # a chain's files so far
    for record in store.attempts():
        stage = _stage(record)
        tally = tallies.setdefault((record.label, stage), Tally(record.label, stage))
        chain = (record.label, record.task_id, record.sample)
        before = left.get(chain)
        if record.files is not None:
            left[chain] = record.files
        task = by_id.get(record.task_id)
        future = None
        if record.outcome not in (Outcome.INFRA_ERROR, Outcome.OVERFLOW) and task is not None:
            future = kind_of(task).rejudge(pool, task, record, asked[task.id], before)
        if future is None:
            tally.not_rejudged += 1
        else:
            pending.append((record, future))
    differences = []
    for record, future in pending:
        verdict = verdict_of(future)
        tally = tallies[(record.label, _stage(record))]
        tally.judged += 1
        if same_verdict(record, verdict):
            tally.identical += 1
        else:
            differences.append(
                Difference(
                    model=record.label,
                    task_id=record.task_id,
                    sample=record.sample,
                    attempt=record.attempt,
                    stored=record.outcome,
                    now=verdict.outcome,
                    detail=verdict.detail,
                )
            )
    return Rerun(
        tallies=list(tallies.values()),
        differences=differences,
        changed_conditions=changed_conditions(
            store, pool.limits, profile, pool.isolation, pool.bwrap
        ),
        isolation=pool.isolation,
    )


def rejudge(
    run_dir: Path,
    *,
    timeout: float | None = None,
    cpu_time: int | None = None,
    memory_mb: int | None = None,
    gate: str | None = None,
    workers: int = 2,
    unsafe_host_exec: bool = False,
) -> Rerun:
    """`rerun` on a run directory, under its recorded limits and gate unless some are
    given here."""
    with RunStore.open(run_dir) as store:
        config = store.manifest.config
        overrides = {"timeout_s": timeout, "cpu_s": cpu_time, "memory_mb": memory_mb}
        try:
            limits = Limits.model_validate(
                config.limits.model_dump()
                | {name: value for name, value in overrides.items() if value is not None}
            )
        except ValueError as exc:
            raise ConfigError(f"invalid limit: {exc}") from exc
        stored = stored_tasks(config, store.manifest.task_sha256, run_dir)
        kind = stored.kind
        tasks = kind.recalled(stored, store.manifest.model_dump())
        profile = get_profile(kind.gate(config.suite, tasks, gate or config.gate_profile))
        prepared = kind.prepare(tasks, config.repos, config.wheels, "codetrial rerun")
        shown = kind.views(tasks, config)
        policy = SandboxPolicy(limits, unsafe_host_exec)
        with JudgePool.for_tasks(workers, policy, prepared) as pool:
            return rerun(store, profile, pool, tasks, shown)
