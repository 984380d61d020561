"""Function tasks: a spec and a signature; the candidate is code, whose tests run on
the trusted side against the sandboxed candidate (trust level "trusted-side")."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from codetrial.config import FUNCTION_DEFAULTS, RunConfig
from codetrial.environments import Prepared
from codetrial.extract import extract
from codetrial.gate import Profile
from codetrial.kinds.base import KINDS, Asked, Kind, output_of, with_libraries
from codetrial.prompts import (
    PROMPT_PROFILES,
    TEMPLATES,
    first_messages,
    repair_messages,
    system_message,
)
from codetrial.records import AttemptRecord, Candidate, Message, Verdict, Visibility
from codetrial.tasks.model import Task
from codetrial.verdict.pool import JudgePool

NO_CODE = "(no code was found in the response)"


class FunctionKind(Kind[Task]):
    name = "function"
    described = "function tasks"
    commands = "`codetrial run`, `evaluate`, `select` or `harden`"
    defaults = FUNCTION_DEFAULTS
    takes_packages = True
    measures_efficiency = True

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        if config.prompt_profile is None:
            return TEMPLATES
        return tuple(dict.fromkeys((*TEMPLATES, *PROMPT_PROFILES[config.prompt_profile].templates)))

    def benchmark(self, tasks: Sequence[Task]) -> bool:
        return any(t.prompt for t in tasks)

    def prepare(
        self, tasks: Sequence[Task], repos: Path | None, wheels: Path | None, command: str
    ) -> Prepared:
        return with_libraries(tasks, wheels)

    def environment(self, task: Task) -> tuple[tuple[str, ...], str] | None:
        return (task.packages, f"{task.suite} (libraries)") if task.packages else None

    def row(self, task: Task) -> tuple[str, str, str]:
        visible = len(task.tests_of(Visibility.VISIBLE))
        hidden = len(task.tests_of(Visibility.HIDDEN))
        asks = task.signature.source.splitlines()[0].removesuffix(":")
        return asks, f"{visible} visible, {hidden} hidden", "yes" if task.reference else "no"

    def artifacts(self, task: Task, record: AttemptRecord, label: str) -> dict[str, str]:
        kept = output_of(record, label)
        if record.code is not None:
            kept[f"candidate_{label}.py"] = record.code
        if record.attempt == 0 and record.sample == 0:
            kept["test_candidate.py"] = "\n\n".join(
                t.source for t in task.tests_of(Visibility.VISIBLE)
            )
            hidden = task.tests_of(Visibility.HIDDEN)
            if hidden:
                kept["test_hidden.py"] = "\n\n".join(t.source for t in hidden)
        return kept

    def system(self, config: RunConfig, profile: Profile, libraries: Sequence[str]) -> Message:
        return system_message(profile.allowed, profile.forbidden)

    def opening(self, task: Task, asked: Asked, system: Message, continues: bool) -> list[Message]:
        return first_messages(task, system, asked.prompt_profile or "codetrial", continues)

    def respond(
        self,
        pool: JudgePool,
        task: Task,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        """The code in the response (with `definitions_only`, its definitions alone)."""
        candidate = extract(text, task.entry_point, asked.definitions_only)
        return candidate, pool.submit(candidate, task, asked.profile)

    def repair(
        self, task: Task, asked: Asked, system: Message, previous: AttemptRecord
    ) -> list[Message]:
        assert previous.feedback is not None
        code = previous.code if previous.code is not None else NO_CODE
        return repair_messages(task, system, code, previous.feedback)

    def rejudge(
        self,
        pool: JudgePool,
        task: Task,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict]:
        return pool.submit(Candidate(record.raw_response, record.code), task, asked.profile)

    def references(
        self, pool: JudgePool, task: Task, profile: Profile
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        if task.reference is None:
            return None, None
        return pool.submit(Candidate(task.reference, task.reference), task, profile), None


FUNCTION = FunctionKind()
KINDS.register(FUNCTION.name, FUNCTION)
