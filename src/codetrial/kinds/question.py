"""Questions: a question about data files, answered in one of three modes:

    direct   the model answers from the files' text, with no program run;
    once     the model writes a program, it runs once, the model answers from what
             it printed (or from its error);
    fix      as once, but a program that fails goes back to the model with its
             error, and the fixed program runs again, for at most the run's tries.

A try is one program (or, in direct, the reply): written, checked by the "program"
gate profile, run in the sandbox with the suite's files read-only in /data, and, when
it ran (or failed on the last try), answered from. The answer is checked on the
trusted side (see `codetrial.verdict.answers`; trust level "trusted-side"): the
verdict on a program that ran asks the model for its reply, and is final once the
reply is checked.
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from string import Template

from codetrial.config import QUESTION_DEFAULTS, Limits, RunConfig
from codetrial.errors import ConfigError
from codetrial.extract import extract
from codetrial.gate import Profile, check
from codetrial.kinds.base import KINDS, Asked, Kind, with_libraries
from codetrial.prompts import INTERPRET_TEMPLATES, read_template
from codetrial.records import (
    AttemptRecord,
    Candidate,
    Message,
    Outcome,
    ProgramRecord,
    Usage,
    Verdict,
)
from codetrial.sandbox import Left, ProgramRun, Sandbox
from codetrial.syntax import described, parse
from codetrial.tasks.questions import QuestionTask
from codetrial.verdict import STOP_OUTCOMES
from codetrial.verdict.answers import check as check_answer
from codetrial.verdict.answers import final_answer
from codetrial.verdict.pool import JudgePool, Prepared, settled

MODES = ("direct", "once", "fix")
PREVIEW_LINES = 6
CONTENTS_CHARS = 12000
OUTPUT_CHARS = 4000


def _render(name: str, **fields: str) -> str:
    return Template(read_template(name)).substitute(**fields)


def _preview(task: QuestionTask, where: Mapping[str, str]) -> str:
    parts = []
    for path in task.files:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        head = "\n".join(lines[:PREVIEW_LINES])
        parts.append(
            f"- {where[path.name]} ({len(lines)} lines; the first ones:)\n```\n{head}\n```"
        )
    return "\n".join(parts) or "(none)"


def _contents(task: QuestionTask) -> str:
    parts = []
    for path in task.files:
        text = path.read_text(encoding="utf-8", errors="replace")
        cut = text[:CONTENTS_CHARS] + ("\n[... cut]" if len(text) > CONTENTS_CHARS else "")
        parts.append(f"{path.name}:\n```\n{cut.rstrip()}\n```")
    return "\n".join(parts) or "(none)"


def inputs(tasks: Sequence[QuestionTask]) -> tuple[Path, ...]:
    """Every file the questions ask about; two different files of one name cannot
    both be in /data."""
    by_name: dict[str, Path] = {}
    for path in (p for task in tasks for p in task.files):
        if by_name.setdefault(path.name, path).resolve() != path.resolve():
            raise ConfigError(
                f"two files are named {path.name}: {by_name[path.name]} and {path}; rename one"
            )
    return tuple(by_name.values())


def _scored(task: QuestionTask, reply: str, program: ProgramRecord) -> tuple[Outcome, str]:
    if task.answer is None:
        return Outcome.ANSWERED, ""
    checked = check_answer(task.answer, reply, program.files, program.figures)
    return (Outcome.PASSED if checked.correct else Outcome.FAILED), checked.why


def refused(code: str | None, profile: Profile) -> tuple[Outcome, str] | None:
    """Why a program is not run: no code, a syntax error, or the gate's policy."""
    if code is None:
        return Outcome.NO_CODE, "The reply held no ```python block with a program."
    try:
        tree = parse(code)
    except SyntaxError as exc:
        return Outcome.SYNTAX_ERROR, described(exc)
    gate = check(tree, None, profile)
    if not gate.allowed:
        return Outcome.REJECTED, f"Rejected by the policy gate ({gate.rule_id}): {gate.message}"
    return None


def failure(run: ProgramRun) -> tuple[Outcome, str] | None:
    """How a program failed: its outcome and what the model is told of it; None when
    it ran to an exit of 0."""
    if run.stop is not None:
        return STOP_OUTCOMES[run.stop], f"{run.stop.value}: {run.stop_detail}"
    if run.exit is None or run.exit.code != 0:
        code = run.exit.code if run.exit else None
        return Outcome.ERROR, run.left.stderr[-OUTPUT_CHARS:].strip() or f"it exited with {code}"
    return None


def _answer_prompt(left: Left, error: str | None) -> str:
    output = left.stdout[:OUTPUT_CHARS] or "(nothing printed)"
    if error is not None:
        output = f"{output}\n{error}"
    written = f"It wrote these files: {', '.join(sorted(left.files))}.\n" if left.files else ""
    ended = "The program failed." if error is not None else "The program ran."
    return _render("interpret_answer.md", ended=ended, output=output, written=written)


def _ran(code: str, mode: str, last: bool) -> Callable[[Sandbox, Limits], Verdict]:
    """The program `code` run in a sandbox: a failure to fix, unless it is the `last`
    try's; otherwise a verdict that asks the model to answer from what it left."""

    def work(sandbox: Sandbox, limits: Limits) -> Verdict:
        with sandbox.program(code) as run:
            pass
        left, failed = run.left, failure(run)
        program = ProgramRecord(
            mode=mode,
            failed=failed[1] if failed else None,
            stdout=left.stdout,
            stderr=left.stderr,
            raised=left.raised,
            files=sorted(left.files),
            skipped=list(left.skipped),
            figures=list(left.figures),
        )
        ran = Verdict(
            Outcome.ANSWERED,
            gate=None,
            usage=Usage(cpu_s=run.exit.cpu_s, peak_kb=run.exit.peak_kb) if run.exit else None,
            program=program,
            written=left.files,
        )
        if failed is not None and not last:
            outcome, told = failed
            return dataclasses.replace(ran, outcome=outcome, detail=told[-300:], feedback=told)
        return dataclasses.replace(ran, asks=_answer_prompt(left, failed[1] if failed else None))

    return work


def _then(future: Future[Verdict], step: Callable[[Verdict], Verdict]) -> Future[Verdict]:
    """The verdict `future` comes to, taken one `step` further."""
    after: Future[Verdict] = Future()

    def settle(done: Future[Verdict]) -> None:
        if done.cancelled():
            after.cancel()
        elif (error := done.exception()) is not None:
            after.set_exception(error)
        else:
            after.set_result(step(done.result()))

    future.add_done_callback(settle)
    return after


class QuestionKind(Kind[QuestionTask]):
    name = "question"
    described = "questions, answered by programs"
    commands = "`codetrial run` or `codetrial ask`"
    defaults = QUESTION_DEFAULTS
    modes = MODES
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
        return dataclasses.replace(with_libraries(tasks, wheels), inputs=inputs(tasks))

    def environment(self, task: QuestionTask) -> tuple[tuple[str, ...], str] | None:
        return (task.packages, f"{task.suite} (questions)") if task.packages else None

    def row(self, task: QuestionTask) -> tuple[str, str, str]:
        answer = f"a {task.answer.kind} answer" if task.answer else "no answer (not scored)"
        files = ", ".join(p.name for p in task.files)
        return task.question, f"{answer}, about {files}", "yes" if task.reference else "no"

    def asked_text(self, task: QuestionTask) -> str:
        return task.question

    def artifacts(self, task: QuestionTask, record: AttemptRecord, label: str) -> dict[str, str]:
        """A round's program, what it printed, and the model's reply."""
        kept = {} if record.code is None else {f"candidate_{label}.py": record.code}
        program = record.program
        if program is not None and record.code is not None:
            kept[f"output_{label}.txt"] = f"{program.stdout}\n{program.stderr}".strip()
        if program is not None and program.reply is not None:
            kept[f"reply_{label}.txt"] = program.reply
        return kept

    def repairs(self, config: RunConfig, mode: str | None) -> int:
        """Only "fix" repairs a program; "direct" and "once" have one try."""
        return config.repair_attempts if mode == "fix" else 0

    def system(self, config: RunConfig, profile: Profile, libraries: Sequence[str]) -> Message:
        return Message(
            "system",
            _render(
                "interpret_system.md",
                python=platform.python_version(),
                libraries=", ".join(libraries) or "none",
            ),
        )

    def opening(
        self, task: QuestionTask, asked: Asked, system: Message, continues: bool
    ) -> list[Message]:
        if asked.mode == "direct":
            direct = _render(
                "interpret_direct.md", question=task.question, contents=_contents(task)
            )
            return [Message("user", direct)]
        preview = _preview(task, asked.inputs)
        asks = _render("interpret_task.md", question=task.question, files=preview)
        return [system, Message("user", asks)]

    def respond(
        self,
        pool: JudgePool,
        task: QuestionTask,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        """In "direct", the reply, checked; otherwise the program in it, run."""
        if asked.mode == "direct":
            return Candidate(text, None), settled(self.answered(task, self._direct(), text))
        code = extract(text, "").code
        return Candidate(text, code), self._judged(pool, task, code, asked)

    def _direct(self) -> Verdict:
        return Verdict(Outcome.ANSWERED, gate=None, program=ProgramRecord(mode="direct"))

    def _judged(
        self, pool: JudgePool, task: QuestionTask, code: str | None, asked: Asked
    ) -> Future[Verdict]:
        mode = asked.mode or "fix"
        stopped = refused(code, pool.profile_for(task, asked.profile))
        if stopped is not None:
            outcome, why = stopped
            feedback = None if asked.last else why
            program = ProgramRecord(mode=mode)
            return settled(
                Verdict(outcome, gate=None, detail=why, feedback=feedback, program=program)
            )
        assert code is not None
        how = f"{mode} program" if asked.last else f"{mode} program to fix"
        return pool.judge_with((task.digest, how, code), _ran(code, mode, asked.last))

    def answered(self, task: QuestionTask, verdict: Verdict, reply: str) -> Verdict:
        """`verdict`, which asked for the model's reply, final with `reply` checked."""
        program = verdict.program or ProgramRecord(mode="direct")
        outcome, why = _scored(task, reply, program)
        told = f"the program failed ({program.failed.splitlines()[-1]}); " if program.failed else ""
        return dataclasses.replace(
            verdict,
            outcome=outcome,
            detail=f"{told}{why}",
            asks=None,
            program=program.model_copy(
                update={"reply": reply, "answer": final_answer(reply), "check": why}
            ),
        )

    def repair(
        self, task: QuestionTask, asked: Asked, system: Message, previous: AttemptRecord
    ) -> list[Message]:
        """The conversation so far, and the failed program's error."""
        fix = _render("interpret_fix.md", error=previous.feedback or "")
        return [
            *(Message(m["role"], m["content"]) for m in previous.messages),
            Message("assistant", previous.raw_response),
            Message("user", fix),
        ]

    def check(
        self, pool: JudgePool, task: QuestionTask, text: str, asked: Asked
    ) -> Future[Verdict]:
        raise ConfigError(
            f"{task.id} is a question, answered by a program and a reply: check the "
            "suite's reference programs with --references, or ask it with `codetrial ask`"
        )

    def rejudge(
        self,
        pool: JudgePool,
        task: QuestionTask,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict] | None:
        """The round's program run again and its stored reply checked again; a round
        that stopped before the reply (its request failed) is not re-judged."""
        program = record.program
        if program is None:
            return None
        if record.mode == "direct" or program.mode == "direct":
            return settled(self.answered(task, self._direct(), program.reply or ""))
        again = dataclasses.replace(asked, mode=program.mode, last=record.feedback is None)
        reply = program.reply

        def replied(verdict: Verdict) -> Verdict:
            if verdict.asks is None or reply is None:
                return verdict
            return self.answered(task, verdict, reply)

        return _then(self._judged(pool, task, record.code, again), replied)

    def references(
        self, pool: JudgePool, task: QuestionTask, asked: Asked
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        """The reference program run, what it printed checked as a final reply is
        (its last line, without an "ANSWER:", is the answer)."""
        if task.reference is None or task.answer is None:
            return None, None
        reference = task.reference
        ran = pool.judge_with((task.digest, "reference", reference), _ran(reference, "once", True))

        def checked(verdict: Verdict) -> Verdict:
            failed = verdict.program.failed if verdict.program else verdict.detail
            if verdict.program is None or failed is not None:
                return dataclasses.replace(verdict, outcome=Outcome.FAILED, detail=failed or "")
            return self.answered(task, verdict, verdict.program.stdout)

        return _then(ran, checked), None


QUESTION = QuestionKind()
KINDS.register(QUESTION.name, QUESTION)
