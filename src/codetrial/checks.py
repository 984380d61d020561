"""Judging without a model: one file against one task, as a run judges a response, or
every task's reference solution (and the files a workspace or repository task starts
from, which must not pass)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codetrial.config import TIME_FACTOR, TIME_FLOOR, Limits
from codetrial.errors import ConfigError
from codetrial.gate import Profile, get_profile
from codetrial.kinds import Asked, Kind, Suite, load_suite
from codetrial.prompts import prompt_profile_for
from codetrial.records import Outcome, Verdict
from codetrial.sandbox import SandboxPolicy
from codetrial.verdict.pool import JudgePool, verdict_of


@dataclass(frozen=True)
class Where:
    """Where the tasks are and how to judge them."""

    suite: str = "contracts10"
    data: Path | None = None
    repos: Path | None = None
    wheels: Path | None = None
    gate: str | None = None
    timeout: float | None = None
    time_factor: float = TIME_FACTOR
    time_floor: float = TIME_FLOOR
    rules: str | None = None  # program tasks': contest (the default) or livecodebench
    workers: int = 1
    unsafe_host_exec: bool = False

    def __post_init__(self) -> None:
        if self.time_factor <= 0 or self.time_floor <= 0:
            raise ConfigError("--time-factor and --time-floor must be above 0")


@dataclass(frozen=True)
class Checked:
    """A task's reference verdict (None without a reference) and the verdict on the
    files it starts from (None for a function task)."""

    task_id: str
    reference: Verdict | None
    start: Verdict | None
    caught_nothing: tuple[str, ...] = ()  # trivial bodies the tests pass
    flaky: tuple[str, ...] = ()  # tests whose outcome changed when the reference ran again

    @property
    def sound(self) -> bool:
        """The reference passes (if there is one), the starting files and every trivial
        body do not, and no test's outcome changes from one run to the next."""
        passes = self.reference is None or self.reference.outcome is Outcome.PASSED
        fails = self.start is None or self.start.outcome is not Outcome.PASSED
        return passes and fails and not self.caught_nothing and not self.flaky


def _policy(kind: Kind[Any], where: Where) -> SandboxPolicy:
    """The sandbox policy of `where`, under the limits a run of `kind`'s tasks defaults
    to, with the --timeout given."""
    defaults = kind.defaults
    limits = Limits.validated(
        defaults.timeout_s if where.timeout is None else where.timeout,
        scratch_mb=defaults.scratch_mb,
    )
    return SandboxPolicy(limits, where.unsafe_host_exec)


@contextlib.contextmanager
def _judging(
    where: Where, kind: Kind[Any], tasks: Suite[Any]
) -> Iterator[tuple[Profile, str | None, JudgePool, Suite[Any]]]:
    """The gate profile of `tasks` (of `kind`), the rules they are judged by, a pool
    that judges them, and the tasks with the time limits they are judged by on this
    machine."""
    profile = get_profile(kind.gate(where.suite, tasks, where.gate))
    rules = kind.judged_by(where.suite, where.rules)
    prepared = kind.prepare(tasks, where.repos, where.wheels, "codetrial check")
    policy = _policy(kind, where)
    with JudgePool.for_tasks(where.workers, policy, prepared) as pool:
        timed = kind.timed(tasks, pool, factor=where.time_factor, floor=where.time_floor)
        yield profile, rules, pool, timed


def check_file(
    text: str,
    task_id: str,
    where: Where,
    edit_format: str = "whole",
    prompt_profile: str | None = None,
) -> tuple[str, str, str | None, Verdict]:
    """(isolation, gate profile, rules, verdict) of `text` judged against `task_id` as a run
    judges a response: its code extracted (for a benchmark task, as its prompt profile
    says), its edit applied to a workspace task's files in `edit_format`, or for a
    repository task the patch applied."""
    tasks = load_suite(where.suite, [task_id], where.data)
    kind = tasks.kind
    with _judging(where, kind, tasks) as (profile, rules, pool, (task,)):
        shown_as = prompt_profile_for(kind.benchmark([task]), where.suite, prompt_profile)
        asked = Asked.of(profile, edit_format, shown_as, rules=rules)
        verdict = verdict_of(kind.check(pool, task, text, asked))
        return pool.isolation, profile.name, rules, verdict


def check_references(where: Where) -> tuple[str, str, str | None, list[Checked]]:
    """(isolation, gate profile, rules, a Checked per task) for every task of the suite."""
    tasks = load_suite(where.suite, None, where.data)
    kind = tasks.kind
    with _judging(where, kind, tasks) as (profile, rules, pool, timed):
        asked = Asked.of(profile, "whole", None, rules=rules)
        pending = [
            (task.id, *kind.references(pool, task, asked), kind.probes(pool, task, profile))
            for task in timed
        ]
        checked = []
        for task_id, reference, start, probes in pending:
            first = verdict_of(reference) if reference else None
            trivial = [p.name for p in probes if p.trivial and _passed(p.verdict)]
            again = [verdict_of(p.verdict) for p in probes if not p.trivial]
            flaky = _changed(first, again) if first else ()
            start_verdict = verdict_of(start) if start else None
            checked.append(Checked(task_id, first, start_verdict, tuple(trivial), flaky))
        return pool.isolation, profile.name, rules, checked


def _passed(future: Future[Verdict]) -> bool:
    return verdict_of(future).outcome is Outcome.PASSED


def _changed(first: Verdict, again: list[Verdict]) -> tuple[str, ...]:
    """The tests whose outcome differs between `first` and any run `again` (or "the
    outcome" when the runs' outcomes differ and no test's does)."""
    outcomes = {t.name: t.outcome for t in first.tests}
    changed = sorted(
        {t.name for run in again for t in run.tests if outcomes.get(t.name) is not t.outcome}
        | {name for run in again for name in outcomes.keys() - {t.name for t in run.tests}}
    )
    if not changed and any(run.outcome is not first.outcome for run in again):
        return ("the outcome",)
    return tuple(changed)
