"""Judging without a model: one file against one task, as a run judges a response, or
every task's reference solution (and the files a workspace or repository task starts
from, which must not pass)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codetrial.config import Limits
from codetrial.gate import Profile, get_profile
from codetrial.kinds import Asked, Kind, kind_of, load_suite
from codetrial.prompts import prompt_profile_for
from codetrial.records import Outcome, Verdict
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import AnyTask
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
    where: Where, kind: Kind[Any], tasks: Sequence[AnyTask]
) -> Iterator[tuple[Profile, JudgePool]]:
    """The gate profile of `tasks` (of `kind`) and a pool that judges them."""
    profile = get_profile(kind.gate(where.suite, tasks, where.gate))
    prepared = kind.prepare(tasks, where.repos, where.wheels, "codetrial check")
    policy = _policy(kind, where)
    with JudgePool.for_tasks(where.workers, policy, prepared) as pool:
        yield profile, pool


def check_file(
    text: str,
    task_id: str,
    where: Where,
    edit_format: str = "whole",
    prompt_profile: str | None = None,
) -> tuple[str, str, Verdict]:
    """(isolation, gate profile, verdict) of `text` judged against `task_id` as a run
    judges a response: its code extracted (for a benchmark task, as its prompt profile
    says), its edit applied to a workspace task's files in `edit_format`, or for a
    repository task the patch applied."""
    (task,) = load_suite(where.suite, [task_id], where.data)
    kind = kind_of(task)
    with _judging(where, kind, [task]) as (profile, pool):
        shown_as = prompt_profile_for(kind.benchmark([task]), where.suite, prompt_profile)
        asked = Asked.of(profile, edit_format, shown_as)
        return pool.isolation, profile.name, verdict_of(kind.check(pool, task, text, asked))


def check_references(where: Where) -> tuple[str, str, list[Checked]]:
    """(isolation, gate profile, a Checked per task) for every task of the suite."""
    tasks = load_suite(where.suite, None, where.data)
    kind = tasks.kind
    with _judging(where, kind, tasks) as (profile, pool):
        pending = [(task.id, *kind_of(task).references(pool, task, profile)) for task in tasks]
        checked = [
            Checked(task_id, *(verdict_of(f) if f else None for f in (reference, start)))
            for task_id, reference, start in pending
        ]
        return pool.isolation, profile.name, checked
