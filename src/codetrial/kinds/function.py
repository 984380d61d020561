"""Function tasks: a spec and a signature; the candidate is code, whose tests run on
the trusted side against the sandboxed candidate (trust level "trusted-side")."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from codetrial.config import FUNCTION_DEFAULTS, RunConfig
from codetrial.extract import extract
from codetrial.gate import Profile, get_profile
from codetrial.kinds.base import KINDS, Asked, Kind, Probe, output_of, with_libraries
from codetrial.prompts import (
    PROMPT_PROFILES,
    TEMPLATES,
    first_messages,
    repair_messages,
    system_message,
)
from codetrial.records import AttemptRecord, Candidate, Message, Verdict, Visibility
from codetrial.tasks.model import Signature, Task
from codetrial.verdict.pool import JudgePool, Prepared

NO_CODE = "(no code was found in the response)"
AGAIN = 2  # more runs of a reference, to find a test whose outcome changes


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

    def asked_text(self, task: Task) -> str:
        return task.spec

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
        self, pool: JudgePool, task: Task, asked: Asked
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        if task.reference is None:
            return None, None
        return pool.submit(Candidate(task.reference, task.reference), task, asked.profile), None

    def probes(self, pool: JudgePool, task: Task, profile: Profile) -> list[Probe]:
        """The trivial bodies (see `trivial_bodies`), judged with the gate off, and the
        reference judged `AGAIN` more times under `profile`, each anew."""
        off = get_profile("off")
        found = [
            Probe(name, True, pool.submit_fresh(Candidate(code, code), task, off))
            for name, code in trivial_bodies(task.signature).items()
        ]
        if task.reference is not None:
            again = Candidate(task.reference, task.reference)
            found += [
                Probe(f"reference, run {n + 2}", False, pool.submit_fresh(again, task, profile))
                for n in range(AGAIN)
            ]
        return found


def trivial_bodies(signature: Signature) -> dict[str, str]:
    """The function of `signature` with each body that does nothing useful: what it
    is -> its code (the signature without its annotations, which may name what the
    task's prompt imports)."""
    definition = signature.definition()
    definition.returns = None
    params = [*definition.args.posonlyargs, *definition.args.args, *definition.args.kwonlyargs]
    for arg in (*params, definition.args.vararg, definition.args.kwarg):
        if arg is not None:
            arg.annotation = None
    bodies: dict[str, list[ast.stmt]] = {
        "pass": [ast.Pass()],
        "return None": [ast.Return(ast.Constant(None))],
        "raise NotImplementedError": [ast.Raise(ast.Name("NotImplementedError"))],
    }
    if params:
        bodies["return its first argument"] = [ast.Return(ast.Name(params[0].arg))]
    found = {}
    for name, body in bodies.items():
        definition.body = body
        found[name] = ast.unparse(ast.fix_missing_locations(definition)) + "\n"
    return found


FUNCTION = FunctionKind()
KINDS.register(FUNCTION.name, FUNCTION)
