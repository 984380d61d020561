"""Predictions: the model states what a program prints on one input (LiveCodeBench's
test-output prediction and code execution scenarios; see `codetrial.tasks.prediction`).

Nothing the model writes runs. Its answer is the last fenced block of its reply; for
a task whose input is a call ("value" comparison), the right-hand side of the last
`assert ... == ...` in the reply, as LiveCodeBench reads it, else that block. A reply
with neither is the outcome no_code.

The right answer is what the task's trusted program prints on the input, run in the
sandbox with the task's CPU and wall seconds, as a reference runs; the answer is
compared with it in codetrial's process (trust level "trusted-side"), as a program
task compares a case's output, or handed to the problem's checker with that output as
the expected one. A task whose source has no program (LiveCodeBench's test-output
file) is judged against the output it states. A program that fails on its own input
is the task's fault: infra_error. One try, no repair: there is nothing to fix but the
answer itself.
"""

from __future__ import annotations

import ast
import dataclasses
import platform
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from string import Template

from codetrial.config import PREDICTION_DEFAULTS, Limits, RunConfig
from codetrial.errors import ConfigError
from codetrial.extract import fenced_blocks, without_reasoning
from codetrial.gate import Profile
from codetrial.kinds.base import KINDS, Asked, Kind, output_of
from codetrial.kinds.program import (
    OUTPUT_CAP,
    Failed,
    case_limits,
    checked,
    cut,
    test_outcome,
)
from codetrial.kinds.question import failure
from codetrial.prompts import PREDICTION_TEMPLATES, read_template
from codetrial.prompts.messages import fenced
from codetrial.records import (
    AttemptRecord,
    Candidate,
    Message,
    Outcome,
    TestResult,
    Usage,
    Verdict,
    Visibility,
)
from codetrial.sandbox import Sandbox
from codetrial.syntax import parse
from codetrial.tasks.prediction import PredictionTask
from codetrial.tasks.programs import Case
from codetrial.verdict.outputs import difference
from codetrial.verdict.pool import JudgePool, settled

NO_ANSWER = "The reply states no answer (no ``` block{assertion})."


def question(task: PredictionTask) -> str:
    """What the model is asked: its scenario's template with what it is shown (a
    program in a block) and the input."""
    shown = fenced(task.shown, "python") if task.scenario == "execution" else task.shown
    if task.compare == "value":
        name, given = "prediction_call.md", task.input.strip()
    else:
        name, given = f"prediction_{task.scenario}.md", fenced(task.input)
    return Template(read_template(name)).substitute(shown=shown.rstrip(), input=given)


def reply_start(task: PredictionTask) -> str:
    """The start of the reply, for a backend that continues one: the opened block (for
    a call, the assertion up to its value), so that what the model writes is the
    answer."""
    name = "prediction_call_reply.md" if task.compare == "value" else "prediction_reply.md"
    return Template(read_template(name)).substitute(input=task.input.strip())


def _asserted(text: str) -> str | None:
    """The right-hand side of the last `assert X == Y` line in `text`."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("assert"):
            continue
        try:
            statement = parse(line).body[0]
        except (SyntaxError, IndexError):
            continue
        test = statement.test if isinstance(statement, ast.Assert) else None
        if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.Eq):
            return ast.get_source_segment(line, test.comparators[0])
    return None


def stated(task: PredictionTask, reply: str) -> str | None:
    """The answer a reply states (see the module's docstring); None when it states none."""
    blocks = fenced_blocks(reply)
    last = blocks[-1][1] if blocks else None
    if task.compare != "value":
        return last
    right = _asserted(last if last is not None else without_reasoning(reply))
    if right is not None:
        return right
    return last.strip() if last is not None and last.strip() else None


def _compared(
    task: PredictionTask, answer: str, right: str, sandbox: Sandbox | None, limits: Limits
) -> Verdict:
    """The verdict on `answer` given the `right` output, by the task's checker (run in
    `sandbox`) or its comparison."""
    wrong: Failed | None
    if task.checker is not None:
        assert sandbox is not None
        wrong = checked(sandbox, task.checker, Case("input", task.stdin, right), answer, limits)
    else:
        why = difference(task.compare, right, answer, abs_tol=task.abs_tol, rel_tol=task.rel_tol)
        wrong = None if why is None else Failed(Outcome.FAILED, f"wrong answer ({why})", "")
    tested = test_outcome(wrong)
    said = "passed" if wrong is None else wrong.detail
    return Verdict(
        Outcome.PASSED if wrong is None else wrong.outcome,
        gate=None,
        tests=(TestResult(name="the input", visibility=Visibility.HIDDEN, outcome=tested),),
        hidden_output=f"right output:\n{cut(right)}\n\nanswer:\n{cut(answer)}\n\n{said}",
        detail="" if wrong is None else wrong.detail,
    )


def _judged_by_running(task: PredictionTask, answer: str) -> Callable[[Sandbox, Limits], Verdict]:
    """The task's program run on its input, and `answer` compared with what it printed."""
    assert task.program is not None
    program = task.program

    def work(sandbox: Sandbox, limits: Limits) -> Verdict:
        one = case_limits(limits, task.cpu_s, task.wall_s)
        with sandbox.program(program, stdin=task.stdin, output_cap=OUTPUT_CAP, limits=one) as run:
            pass
        usage = Usage(cpu_s=run.exit.cpu_s, peak_kb=run.exit.peak_kb) if run.exit else None
        failed = failure(run)
        if failed is not None:
            how, told = failed
            why = f"the program that says what is right failed on its input ({how.value}): "
            return Verdict(Outcome.INFRA_ERROR, gate=None, detail=why + told[-300:], usage=usage)
        right = run.left.output.decode("utf-8", "replace")
        return dataclasses.replace(_compared(task, answer, right, sandbox, one), usage=usage)

    return work


class PredictionKind(Kind[PredictionTask]):
    name = "prediction"
    described = "output predictions (what a program prints on an input)"
    commands = "`codetrial run` or `codetrial check`"
    defaults = PREDICTION_DEFAULTS

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        return PREDICTION_TEMPLATES

    def gate(self, suite: str, tasks: Sequence[PredictionTask], gate: str | None) -> str:
        """ "off": nothing the model writes runs, so there is nothing to gate."""
        if gate not in (None, "off"):
            raise ConfigError(
                f"suite {suite!r} holds output predictions, whose answers are text that "
                "never runs: there is no code to gate; leave --gate out (or pass --gate off)"
            )
        return "off"

    def row(self, task: PredictionTask) -> tuple[str, str, str]:
        judged = "a checker" if task.checker is not None else f"{task.compare} comparison"
        against = "the program's output" if task.program else "the stated output"
        return (
            task.title,
            f"{task.scenario}: one input, {against}, by {judged}",
            ("yes" if task.program else "no"),
        )

    def recorded(self, task: PredictionTask) -> dict[str, dict[str, object]]:
        return {"released": {task.id: task.released}} if task.released else {}

    def asked_text(self, task: PredictionTask) -> str:
        return question(task)

    def artifacts(self, task: PredictionTask, record: AttemptRecord, label: str) -> dict[str, str]:
        kept = output_of(record, label)
        if record.code is not None:
            kept[f"answer_{label}.txt"] = record.code
        return kept

    def repairs(self, config: RunConfig, mode: str | None) -> int:
        """None: an answer is stated once."""
        return 0

    def system(self, config: RunConfig, profile: Profile, libraries: Sequence[str]) -> Message:
        text = Template(read_template("prediction_system.md")).substitute(
            python=platform.python_version()
        )
        return Message("system", text)

    def opening(
        self, task: PredictionTask, asked: Asked, system: Message, continues: bool
    ) -> list[Message]:
        """The question, and for a backend that `continues` a reply, its start."""
        start = [Message("assistant", reply_start(task))] if continues else []
        return [system, Message("user", question(task)), *start]

    def respond(
        self,
        pool: JudgePool,
        task: PredictionTask,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        """The answer the reply states, judged."""
        answer = stated(task, text)
        return Candidate(text, answer), self._judged(pool, task, answer)

    def _judged(self, pool: JudgePool, task: PredictionTask, answer: str | None) -> Future[Verdict]:
        if answer is None:
            assertion = " or `assert ... == ...` line" if task.compare == "value" else ""
            why = NO_ANSWER.format(assertion=assertion)
            return settled(Verdict(Outcome.NO_CODE, gate=None, detail=why))
        if task.program is None:
            assert task.expected is not None
            return settled(_compared(task, answer, task.expected, None, pool.limits))
        return pool.judge_with((task.digest, self.name, answer), _judged_by_running(task, answer))

    def rejudge(
        self,
        pool: JudgePool,
        task: PredictionTask,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict]:
        return self._judged(pool, task, record.code)

    def references(
        self, pool: JudgePool, task: PredictionTask, asked: Asked
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        """The output the task's source states, judged as an answer: it passes only
        when the program, run in the sandbox, prints it."""
        if task.program is None or task.expected is None:
            return None, None
        return self._judged(pool, task, task.expected), None


PREDICTION = PredictionKind()
KINDS.register(PREDICTION.name, PREDICTION)
