"""Questions: a question about data files, answered by programs the model writes in
the interpreter loop (see `codetrial.interpret`); the answer is checked on the
trusted side (trust level "trusted-side")."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from codetrial.config import QUESTION_DEFAULTS, RunConfig
from codetrial.environments import Prepared
from codetrial.errors import ConfigError
from codetrial.kinds.base import KINDS, Asked, Kind, with_libraries
from codetrial.prompts import INTERPRET_TEMPLATES
from codetrial.records import AttemptRecord, Verdict
from codetrial.tasks.questions import QuestionTask
from codetrial.verdict.pool import JudgePool


class QuestionKind(Kind[QuestionTask]):
    name = "question"
    described = "questions, answered by programs"
    commands = "`codetrial run` or `codetrial ask`"
    defaults = QUESTION_DEFAULTS
    interpreted = True
    takes_packages = True

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        return INTERPRET_TEMPLATES

    def gate(self, suite: str, tasks: Sequence[QuestionTask], gate: str | None) -> str:
        """ "program" by default, or "off": a question is answered by whole programs."""
        if gate not in (None, "program", "off"):
            raise ConfigError(
                f"suite {suite!r} holds questions, answered by whole programs that the "
                "function gate profiles forbid: judge them with --gate program (the default) "
                "or --gate off"
            )
        return gate or "program"

    def prepare(
        self,
        tasks: Sequence[QuestionTask],
        repos: Path | None,
        wheels: Path | None,
        command: str,
    ) -> Prepared:
        return with_libraries(tasks, wheels)

    def environment(self, task: QuestionTask) -> tuple[tuple[str, ...], str] | None:
        return (task.packages, f"{task.suite} (questions)") if task.packages else None

    def row(self, task: QuestionTask) -> tuple[str, str, str]:
        answer = f"a {task.answer.kind} answer" if task.answer else "no answer (not scored)"
        files = ", ".join(p.name for p in task.files)
        return task.question, f"{answer}, about {files}", "yes" if task.reference else "no"

    def artifacts(self, task: QuestionTask, record: AttemptRecord, label: str) -> dict[str, str]:
        """A round's program, what it printed, and the model's reply."""
        kept = {} if record.code is None else {f"candidate_{label}.py": record.code}
        program = record.program
        if program is not None and record.code is not None:
            kept[f"output_{label}.txt"] = f"{program.stdout}\n{program.stderr}".strip()
        if program is not None and program.reply is not None:
            kept[f"reply_{label}.txt"] = program.reply
        return kept

    def check(
        self, pool: JudgePool, task: QuestionTask, text: str, asked: Asked
    ) -> Future[Verdict]:
        raise ConfigError(
            f"{task.id} is a question, answered by a program and a reply: check the "
            "suite's reference programs with --references, or ask it with `codetrial ask`"
        )


QUESTION = QuestionKind()
KINDS.register(QUESTION.name, QUESTION)
