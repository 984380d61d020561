"""The code interpreter on trial: questions about data files, answered by programs
the model writes and the sandbox runs (see `loop`), scored on the trusted side
(see `answers`).

A question suite's sandbox binds the suite's files read-only in /data and its
package environment on the import path; programs are checked by the "program" gate
profile (the standard library and the environment's libraries), and every round is
stored like any other attempt, under the model's label in each mode.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import RunConfig, mode_label
from codetrial.environments import Environment
from codetrial.errors import ConfigError
from codetrial.gate import Profile
from codetrial.interpret.answers import check
from codetrial.interpret.loop import Asking, ask, failure
from codetrial.models import Backend
from codetrial.records import AttemptRecord, Outcome
from codetrial.sandbox import Mounts, Sandbox, SandboxPolicy, open_sandbox
from codetrial.store import RunStore
from codetrial.store.artifacts import outputs_dir, write_outputs
from codetrial.tasks.questions import QuestionTask


def _inputs(tasks: Sequence[QuestionTask]) -> tuple[Path, ...]:
    """Every file the questions ask about; two different files of one name cannot
    both be in /data."""
    by_name: dict[str, Path] = {}
    for path in (p for task in tasks for p in task.files):
        if by_name.setdefault(path.name, path).resolve() != path.resolve():
            raise ConfigError(
                f"two files are named {path.name}: {by_name[path.name]} and {path}; rename one"
            )
    return tuple(by_name.values())


@contextlib.contextmanager
def question_sandbox(
    tasks: Sequence[QuestionTask], environment: Environment, policy: SandboxPolicy
) -> Iterator[Sandbox]:
    """A sandbox under `policy` with the questions' files in /data and `environment`
    importable."""
    mounts = Mounts(
        packages=(environment.path,), preload=environment.preload, inputs=_inputs(tasks)
    )
    sandbox = open_sandbox(policy.with_mounts(mounts))
    try:
        yield sandbox
    finally:
        sandbox.close()


def _finished(records: Sequence[AttemptRecord]) -> bool:
    """Whether a stored chain of rounds ended: its last round was not one to fix,
    nor a failure of the machinery, which says nothing about the model."""
    return (
        bool(records)
        and records[-1].feedback is None
        and (records[-1].outcome is not Outcome.INFRA_ERROR)
    )


def run_questions(
    tasks: Sequence[QuestionTask],
    backends: Sequence[Backend],
    *,
    config: RunConfig,
    sandbox: Sandbox,
    profile: Profile,
    libraries: tuple[str, ...],
    store: RunStore,
    progress: Callable[[AttemptRecord], None],
) -> None:
    """Ask every question of every model in each of the run's modes, storing each
    round and telling `progress` of it; a chain stored whole is not asked again, and
    one cut short is asked again from its first round, its stored rounds discarded
    (its conversation cannot be taken up where it stopped)."""
    stored: dict[tuple[str, str], list[AttemptRecord]] = {}
    for record in store.attempts():
        stored.setdefault((record.model, record.task_id), []).append(record)
    by_task = {task.id: task for task in tasks}

    def save(record: AttemptRecord, files: dict[str, bytes]) -> None:
        if files:
            folder = outputs_dir(store.run_dir, record.model, record.task_id, record.attempt)
            write_outputs(folder, files)
        store.save(by_task[record.task_id], record)
        progress(record)

    for backend in backends:
        for mode in config.modes:
            label = mode_label(backend.name, mode)
            asking = Asking(
                backend=backend,
                options=config.options(),
                sandbox=sandbox,
                profile=profile,
                libraries=libraries,
                model=label,
                save=save,
            )
            for task in tasks:
                chain = stored.get((label, task.id), [])
                if _finished(chain):
                    continue
                if chain:
                    store.discard(label, task.id)
                ask(task, mode, config.repair_attempts + 1, asking)


@dataclass(frozen=True)
class ReferenceCheck:
    """A question's reference program, run: whether its last printed line (and, for
    a chart, what it saved) is the right answer, and why not."""

    task_id: str
    correct: bool
    why: str


def check_references(tasks: Sequence[QuestionTask], sandbox: Sandbox) -> list[ReferenceCheck]:
    """Each question's reference, run in `sandbox` and checked as a model's answer
    is, its output standing for the final reply (whose last line, without an
    "ANSWER:", is the answer); a question without a reference or an answer is left
    out."""
    checked = []
    for task in tasks:
        if task.reference is None or task.answer is None:
            continue
        with sandbox.program(task.reference) as run:
            pass
        failed = failure(run)
        if failed is not None:
            checked.append(ReferenceCheck(task.id, False, failed[1]))
            continue
        result = check(task.answer, run.left.stdout, run.left.files, run.left.figures)
        checked.append(ReferenceCheck(task.id, result.correct, result.why))
    return checked
