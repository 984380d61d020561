"""The interpreter loop for one question, in one of three modes:

    direct   the model answers from the files' text, with no program run;
    once     the model writes a program, it runs once, the model answers from what
             it printed (or from its error);
    fix      as once, but a program that fails goes back to the model with its
             error, and the fixed program runs again, for at most `rounds` programs.

Each round is an AttemptRecord (attempt 0, 1, ...), stored by the caller as it
comes; a round that ends in a reply is scored there, on the trusted side (see
`codetrial.interpret.answers`). A program runs only once the gate allows it.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from string import Template

from codetrial.errors import BackendError, BackendUnavailable
from codetrial.extract import extract
from codetrial.gate import Profile, check
from codetrial.interpret.answers import check as check_answer
from codetrial.interpret.answers import final_answer
from codetrial.models import Backend
from codetrial.prompts import read_template
from codetrial.records import (
    AttemptRecord,
    Generation,
    GenerationOptions,
    Message,
    Outcome,
    ProgramRecord,
)
from codetrial.sandbox import Left, ProgramRun, Sandbox
from codetrial.syntax import described, parse
from codetrial.tasks.questions import QuestionTask
from codetrial.verdict import STOP_OUTCOMES

MODES = ("direct", "once", "fix")
PREVIEW_LINES = 6
CONTENTS_CHARS = 12000
OUTPUT_CHARS = 4000

Saved = Callable[[AttemptRecord, dict[str, bytes]], None]


@dataclass(frozen=True)
class Asking:
    """What every round of a question needs: the model and its options, the sandbox
    (with the question's files bound in it), the gate profile and the libraries it
    allows, the label the rounds are stored under, and `save`, called with each
    round and the files its program wrote."""

    backend: Backend
    options: GenerationOptions
    sandbox: Sandbox
    profile: Profile
    libraries: tuple[str, ...]
    model: str
    save: Saved


def _render(name: str, **fields: str) -> str:
    return Template(read_template(name)).substitute(**fields)


def system(libraries: Sequence[str]) -> Message:
    return Message(
        "system",
        _render(
            "interpret_system.md",
            python=platform.python_version(),
            libraries=", ".join(libraries) or "none",
        ),
    )


def _preview(task: QuestionTask, where: dict[str, str]) -> str:
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


def _generate(asking: Asking, messages: Sequence[Message]) -> Generation | str:
    """The model's reply, or why there is none (a request that failed; an
    unreachable backend stops the run)."""
    try:
        return asking.backend.generate(messages, asking.options)
    except BackendUnavailable:
        raise
    except BackendError as exc:
        return str(exc)


def _record(
    task: QuestionTask,
    attempt: int,
    messages: Sequence[Message],
    asking: Asking,
    generations: Sequence[Generation],
    outcome: Outcome,
    **fields: object,
) -> AttemptRecord:
    prompt = [g.prompt_tokens for g in generations]
    completion = [g.completion_tokens for g in generations]
    return AttemptRecord.model_validate(
        {
            "model": asking.model,
            "task_id": task.id,
            "attempt": attempt,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "raw_response": generations[0].text if generations else "",
            "code": None,
            "outcome": outcome,
            "prompt_tokens": None if None in prompt else sum(p or 0 for p in prompt),
            "completion_tokens": None if None in completion else sum(c or 0 for c in completion),
            "generation_s": sum(g.duration_s for g in generations),
            "model_memory_kb": generations[-1].memory_kb if generations else None,
            **fields,
        }
    )


def _scored(task: QuestionTask, reply: str, left: Left) -> tuple[Outcome, str]:
    if task.answer is None:
        return Outcome.ANSWERED, ""
    checked = check_answer(task.answer, reply, left.files, left.figures)
    return (Outcome.PASSED if checked.correct else Outcome.FAILED), checked.why


def ask(task: QuestionTask, mode: str, rounds: int, asking: Asking) -> AttemptRecord:
    """Ask `task` in `mode` (for "fix", at most `rounds` programs), saving each
    round; the last round."""
    if mode == "direct":
        return _direct(task, asking)
    task_text = _render(
        "interpret_task.md", question=task.question, files=_preview(task, asking.sandbox.inputs())
    )
    messages = [system(asking.libraries), Message("user", task_text)]
    limit = rounds if mode == "fix" else 1
    for attempt in range(limit):
        record, files = _program_round(task, mode, attempt, messages, asking, attempt + 1 == limit)
        asking.save(record, files)
        if record.program is None or record.program.reply is not None or record.feedback is None:
            return record
        fix = _render("interpret_fix.md", error=record.feedback)
        messages = [*messages, Message("assistant", record.raw_response), Message("user", fix)]
    return record


def _direct(task: QuestionTask, asking: Asking) -> AttemptRecord:
    text = _render("interpret_direct.md", question=task.question, contents=_contents(task))
    messages = [Message("user", text)]
    reply = _generate(asking, messages)
    if isinstance(reply, str):
        record = _record(task, 0, messages, asking, [], Outcome.INFRA_ERROR, detail=reply)
    else:
        outcome, why = _scored(task, reply.text, Left())
        program = ProgramRecord(
            mode="direct", reply=reply.text, answer=final_answer(reply.text), check=why
        )
        record = _record(task, 0, messages, asking, [reply], outcome, program=program, detail=why)
    asking.save(record, {})
    return record


def _refused(code: str | None, asking: Asking) -> tuple[Outcome, str] | None:
    """Why a program is not run: no code, a syntax error, or the gate's policy."""
    if code is None:
        return Outcome.NO_CODE, "The reply held no ```python block with a program."
    try:
        tree = parse(code)
    except SyntaxError as exc:
        return Outcome.SYNTAX_ERROR, described(exc)
    gate = check(tree, None, asking.profile)
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


def _program_round(
    task: QuestionTask,
    mode: str,
    attempt: int,
    messages: list[Message],
    asking: Asking,
    last: bool,
) -> tuple[AttemptRecord, dict[str, bytes]]:
    """One program: written, checked, run, and, when it ran (or failed in the last
    round), answered from. A round that failed and may be fixed has `feedback`."""
    generation = _generate(asking, messages)
    if isinstance(generation, str):
        return _record(
            task, attempt, messages, asking, [], Outcome.INFRA_ERROR, detail=generation
        ), {}
    code = extract(generation.text, "").code
    refused = _refused(code, asking)
    if refused is not None:
        outcome, why = refused
        return _record(
            task,
            attempt,
            messages,
            asking,
            [generation],
            outcome,
            code=code,
            detail=why,
            feedback=None if last else why,
            program=ProgramRecord(mode=mode),
        ), {}
    assert code is not None
    started = time.monotonic()
    with asking.sandbox.program(code) as run:
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
    usage = {"cpu_s": run.exit.cpu_s, "peak_kb": run.exit.peak_kb} if run.exit else None
    ran = {"code": code, "execution_s": time.monotonic() - started, "usage": usage}
    if failed is not None and not last:
        record = _record(
            task,
            attempt,
            messages,
            asking,
            [generation],
            failed[0],
            **ran,
            detail=failed[1][-300:],
            feedback=failed[1],
            program=program,
        )
        return record, left.files
    error = failed[1] if failed else None
    asked = _answer_prompt(left, error)
    answer_messages = [*messages, Message("assistant", generation.text), Message("user", asked)]
    reply = _generate(asking, answer_messages)
    if isinstance(reply, str):
        record = _record(
            task,
            attempt,
            answer_messages,
            asking,
            [generation],
            Outcome.INFRA_ERROR,
            **ran,
            detail=reply,
            program=program,
        )
        return record, left.files
    outcome, why = _scored(task, reply.text, left)
    program = program.model_copy(
        update={"reply": reply.text, "answer": final_answer(reply.text), "check": why}
    )
    told = f"the program failed ({error.splitlines()[-1]}); " if error else ""
    record = _record(
        task,
        attempt,
        answer_messages,
        asking,
        [generation, reply],
        outcome,
        **ran,
        detail=f"{told}{why}",
        program=program,
    )
    return record, left.files


def _answer_prompt(left: Left, error: str | None) -> str:
    output = left.stdout[:OUTPUT_CHARS] or "(nothing printed)"
    if error is not None:
        output = f"{output}\n{error}"
    written = f"It wrote these files: {', '.join(sorted(left.files))}.\n" if left.files else ""
    ended = "The program failed." if error is not None else "The program ran."
    return _render("interpret_answer.md", ended=ended, output=output, written=written)
