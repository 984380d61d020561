"""Programs: contest problems, whose candidate is the model's whole program.

Each case runs the program once, in a fresh sandboxed process, with the case's input
on standard input and the case's CPU and wall seconds (the task's timing: calibrated
from its reference, see `codetrial.verdict.calibration`, or the problem's own); a run
that used more CPU time than its case allows is a timeout, to the hundredth of a
second, whatever the whole seconds the sandbox enforces; its whole standard output (at
most OUTPUT_CAP bytes: more is the outcome output_limit) is compared with the case's
expected output in codetrial's process (see `codetrial.verdict.outputs`; trust
level "trusted-side"). Nothing else the program does is read: not its exit code when
it printed a wrong answer, nor its files, nor what it writes on standard error
(shown to the model for a sample case it crashed on, as data).

A task with a checker has each case decided by the checker instead: a program of the
task's, run in a process of its own (never the candidate's) with the case's limits (at
least DEFAULT_CPU_S and DEFAULT_WALL_S), reading one JSON object on standard input,
{"input", "expected", "output"} (the case's input, its expected output and the
candidate's output, as text), and exiting 0 when the output is right, 1 when it is
wrong (the first line it prints saying why); any other end of the checker's is the
task's fault, infra_error.

Sample cases run first; hidden cases run only once every sample passes. The first
case that fails decides the verdict: a sample's failure goes back to the model with
the case's input and both outputs (cut to SHOWN characters each), a hidden case's
only as "a hidden case failed", with no feedback.

A run judges by one of two sets of rules (RULES, `--rules`): a contest judge's, the
default, as above; or LiveCodeBench's evaluator's, for figures that are its own: the
program run as that evaluator runs it (see `codetrial.verdict.livecodebench`), its
exit 0 whatever code a `SystemExit` carried, and its output compared as that
evaluator compares (the comparison `livecodebench`, whatever the task states; a
checker still decides where the task has one).
"""

from __future__ import annotations

import dataclasses
import json
import math
import platform
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

from codetrial.config import PROGRAM_DEFAULTS, RULES, Limits, RunConfig
from codetrial.errors import ConfigError
from codetrial.extract import extract
from codetrial.gate import Profile
from codetrial.kinds.base import KINDS, Asked, Kind, Suite, output_of
from codetrial.kinds.question import refused
from codetrial.prompts import PROGRAM_TEMPLATES, read_template
from codetrial.prompts.messages import fenced
from codetrial.records import (
    AttemptRecord,
    Candidate,
    Message,
    Outcome,
    TestOutcome,
    TestResult,
    Usage,
    Verdict,
    Visibility,
)
from codetrial.sandbox import ProgramRun, Sandbox
from codetrial.tasks.programs import (
    DEFAULT_CPU_S,
    DEFAULT_WALL_S,
    Case,
    ProgramTask,
    Timing,
    case_name,
)
from codetrial.verdict import STOP_OUTCOMES, livecodebench
from codetrial.verdict.calibration import calibrated
from codetrial.verdict.outputs import difference
from codetrial.verdict.pool import JudgePool, Prepared, settled

OUTPUT_CAP = 16 * 1024 * 1024  # bytes of standard output one case's run may write
CHECKER_OUTPUT_CAP = 65536
SHOWN = 1000  # characters of a case's input and outputs in the feedback
ERROR_CHARS = 2000


def _render(name: str, **fields: str) -> str:
    return Template(read_template(name)).substitute(**fields)


def cut(text: str) -> str:
    """`text`, cut to SHOWN characters, saying how many more there were."""
    if len(text) <= SHOWN:
        return text
    return f"{text[:SHOWN]}\n[... {len(text) - SHOWN} more characters]"


def _fenced(text: str) -> str:
    """`text`, cut to SHOWN characters, in a fence nothing in it can close."""
    return fenced(cut(text).rstrip() or "(nothing)")


def case_limits(limits: Limits, cpu: float, wall: float) -> Limits:
    """The run's `limits` with `cpu` CPU seconds (the sandbox's, whole) and `wall` wall
    seconds, for one case's run."""
    return limits.model_copy(update={"cpu_s": math.ceil(cpu), "timeout_s": wall})


@dataclass(frozen=True)
class Failed:
    """How one case failed: its outcome, what a person reads, what the model is told
    when the case is a sample."""

    outcome: Outcome
    detail: str
    told: str


def _ran_wrong(run: ProgramRun, cpu: float) -> Failed | None:
    """How the candidate's run failed before its output could be judged (past `cpu`
    CPU seconds, the case's limit, is a timeout); None when it exited 0."""
    if run.exit is not None and run.exit.cpu_s > cpu:
        why = f"timeout: {run.exit.cpu_s:.2f} s of CPU, over the case's {cpu:g} s"
        return Failed(Outcome.TIMEOUT, why, why)
    if run.stop is not None:
        why = f"{run.stop.value}: {run.stop_detail}"
        return Failed(STOP_OUTCOMES[run.stop], why, why)
    if run.exit is None or run.exit.code != 0:
        code = run.exit.code if run.exit else None
        error = run.left.stderr[-ERROR_CHARS:].strip()
        told = f"it exited with code {code}" + (f":\n{_fenced(error)}" if error else "")
        return Failed(Outcome.ERROR, f"exited with code {code}", told)
    return None


def checked(
    sandbox: Sandbox, checker: str, case: Case, output: str, limits: Limits
) -> Failed | None:
    """The `checker`'s decision on `output` for `case`: None when it accepts it."""
    given = json.dumps({"input": case.input, "expected": case.output, "output": output})
    with sandbox.program(checker, stdin=given, output_cap=CHECKER_OUTPUT_CAP, limits=limits) as run:
        pass
    code = run.exit.code if run.exit is not None and run.stop is None else None
    if code == 0:
        return None
    if code == 1:
        said = run.left.output.decode("utf-8", "replace").strip().splitlines()
        why = f"wrong answer (the checker says: {said[0][:SHOWN] if said else 'wrong'})"
        return Failed(Outcome.FAILED, why, why)
    how = f"{run.stop.value}: {run.stop_detail}" if run.stop else f"exit code {code}"
    error = run.left.stderr[-ERROR_CHARS:].strip()
    why = f"the checker failed on case {case.name} ({how}) {error}".strip()
    return Failed(Outcome.INFRA_ERROR, why, why)


def _compared(
    sandbox: Sandbox, task: ProgramTask, case: Case, output: str, limits: Limits, compare: str
) -> Failed | None:
    """How `output` is wrong for `case`, by the checker or the comparison `compare`;
    None when it is right."""
    if task.checker is not None:
        return checked(sandbox, task.checker, case, output, limits)
    why = difference(compare, case.output, output, abs_tol=task.abs_tol, rel_tol=task.rel_tol)
    if why is None:
        return None
    return Failed(Outcome.FAILED, f"wrong answer ({why})", f"wrong answer ({why})")


def _told(task: ProgramTask, case: Case, failed: Failed, output: str) -> str:
    """What the model is told of a sample case that failed."""
    expected = "A right output" if task.checker is not None else "Expected output"
    return (
        f"Sample case {case.name} failed: {failed.told}\n\nInput:\n{_fenced(case.input)}\n\n"
        f"{expected}:\n{_fenced(case.output)}\n\nYour program's output:\n{_fenced(output)}"
    )


def _judged_by_cases(
    task: ProgramTask, code: str, rules: str
) -> Callable[[Sandbox, Limits], Verdict]:
    """The program `code` run on every sample case, then every hidden case, up to the
    first that fails, under `rules` (one of RULES)."""
    cases = [(Visibility.VISIBLE, c) for c in task.samples]
    cases += [(Visibility.HIDDEN, c) for c in task.hidden]
    evaluators = rules == "livecodebench"
    ran = livecodebench.program(code) if evaluators else code
    compare = "livecodebench" if evaluators else task.compare

    def work(sandbox: Sandbox, limits: Limits) -> Verdict:
        if ran is None:
            why = "LiveCodeBench's evaluator cannot make a function of this program"
            return Verdict(Outcome.ERROR, gate=None, detail=why, feedback=why)
        results: list[TestResult] = []
        lines: dict[Visibility, list[str]] = {Visibility.VISIBLE: [], Visibility.HIDDEN: []}
        cpu_s, peak_kb = 0.0, 0
        for visibility, case in cases:
            name = case_name(visibility is Visibility.VISIBLE, case)
            cpu, wall = task.seconds(name)
            one = case_limits(limits, cpu, wall)
            with sandbox.program(ran, stdin=case.input, output_cap=OUTPUT_CAP, limits=one) as run:
                pass
            if run.exit is not None:
                cpu_s, peak_kb = cpu_s + run.exit.cpu_s, max(peak_kb, run.exit.peak_kb)
            output = run.left.output.decode("utf-8", "replace")
            checker = case_limits(limits, max(cpu, DEFAULT_CPU_S), max(wall, DEFAULT_WALL_S))
            failed = _ran_wrong(run, cpu) or _compared(
                sandbox, task, case, output, checker, compare
            )
            results.append(
                TestResult(
                    name=name,
                    visibility=visibility,
                    outcome=test_outcome(failed),
                    duration_s=run.exit.cpu_s if run.exit else 0.0,
                )
            )
            lines[visibility].append(f"{name}: {failed.detail if failed else 'passed'}")
            if failed is not None:
                break
        verdict = Verdict(
            Outcome.PASSED if failed is None else failed.outcome,
            gate=None,
            tests=tuple(results),
            visible_output="\n".join(lines[Visibility.VISIBLE]),
            hidden_output="\n".join(lines[Visibility.HIDDEN]),
            usage=Usage(cpu_s=cpu_s, peak_kb=peak_kb),
        )
        if failed is None:
            return verdict
        if failed.outcome is Outcome.INFRA_ERROR:  # the checker's fault: nothing to repair
            return dataclasses.replace(verdict, detail=failed.detail)
        if visibility is Visibility.HIDDEN:
            return dataclasses.replace(
                verdict, detail=f"a hidden case failed ({failed.outcome.value})"
            )
        return dataclasses.replace(
            verdict,
            detail=f"sample case {case.name}: {failed.detail}",
            feedback=_told(task, case, failed, output),
        )

    return work


def test_outcome(failed: Failed | None) -> TestOutcome:
    """How a case that `failed` (or passed, None) ended, as a test's outcome."""
    if failed is None:
        return TestOutcome.PASSED
    return TestOutcome.FAILED if failed.outcome is Outcome.FAILED else TestOutcome.ERROR


class ProgramKind(Kind[ProgramTask]):
    name = "program"
    described = "program tasks (contest problems)"
    commands = "`codetrial run` or `codetrial check`"
    defaults = PROGRAM_DEFAULTS
    rules = RULES

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        return PROGRAM_TEMPLATES

    def gate(self, suite: str, tasks: Sequence[ProgramTask], gate: str | None) -> str:
        """ "contest" by default, or "off": a contest problem is answered by a whole
        program that reads its standard input."""
        if gate not in (None, "contest", "off"):
            raise ConfigError(
                f"suite {suite!r} holds contest problems, answered by whole programs that "
                "read standard input: judge them with --gate contest (the default) or --gate off"
            )
        return gate or "contest"

    def prepare(
        self, tasks: Sequence[ProgramTask], repos: Path | None, wheels: Path | None, command: str
    ) -> Prepared:
        """The standard modules a program under LiveCodeBench's rules imports before it
        runs, loaded once per sandbox (about 10 ms of CPU in each case's process
        otherwise); a program under a contest judge's finds them loaded, which only
        spares it the time of importing one."""
        return Prepared(None, {}, {}, preload=livecodebench.PRELOAD)

    def row(self, task: ProgramTask) -> tuple[str, str, str]:
        judged = "a checker" if task.checker is not None else f"{task.compare} comparison"
        cases = f"{len(task.samples)} sample, {len(task.hidden)} hidden cases, by {judged}"
        return task.title, cases, "yes" if task.reference else "no"

    def recorded(self, task: ProgramTask) -> dict[str, dict[str, object]]:
        kept: dict[str, dict[str, object]] = {}
        if task.released:
            kept["released"] = {task.id: task.released}
        if task.timing:
            kept["time_limits"] = {task.id: task.timing.as_dict()}
        return kept

    def timed(
        self, tasks: Suite[ProgramTask], pool: JudgePool, *, factor: float, floor: float
    ) -> Suite[ProgramTask]:
        """Each case's CPU limit, calibrated from the reference (see
        `codetrial.verdict.calibration`) unless the problem states its own."""
        kept = calibrated(pool, tasks, factor=factor, floor=floor, output_cap=OUTPUT_CAP)
        return Suite(tasks.name, self, kept)

    def recalled(
        self, tasks: Suite[ProgramTask], manifest: Mapping[str, Any]
    ) -> Suite[ProgramTask]:
        """The tasks with the time limits the run recorded for them."""
        limits = manifest.get("time_limits", {})
        return Suite(
            tasks.name,
            self,
            (
                dataclasses.replace(t, timing=Timing.of_dict(limits[t.id])) if t.id in limits else t
                for t in tasks
            ),
        )

    def asked_text(self, task: ProgramTask) -> str:
        return task.statement

    def artifacts(self, task: ProgramTask, record: AttemptRecord, label: str) -> dict[str, str]:
        kept = output_of(record, label)
        if record.code is not None:
            kept[f"candidate_{label}.py"] = record.code
        return kept

    def system(self, config: RunConfig, profile: Profile, libraries: Sequence[str]) -> Message:
        return Message(
            "system",
            _render(
                "program_system.md",
                python=platform.python_version(),
                allowed=profile.allowed,
                forbidden=profile.forbidden,
            ),
        )

    def opening(
        self, task: ProgramTask, asked: Asked, system: Message, continues: bool
    ) -> list[Message]:
        return [system, Message("user", _render("program_task.md", statement=task.statement))]

    def respond(
        self,
        pool: JudgePool,
        task: ProgramTask,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        """The program in the response, run on the task's cases."""
        code = extract(text, "").code
        return Candidate(text, code), self._judged(pool, task, code, asked)

    def _judged(
        self, pool: JudgePool, task: ProgramTask, code: str | None, asked: Asked
    ) -> Future[Verdict]:
        stopped = refused(code, pool.profile_for(task, asked.profile))
        if stopped is not None:
            outcome, why = stopped
            return settled(Verdict(outcome, gate=None, detail=why, feedback=why))
        assert code is not None
        rules = asked.rules or RULES[0]
        return pool.judge_with(
            (task.timed_digest, f"{self.name} by {rules} rules", code),
            _judged_by_cases(task, code, rules),
        )

    def repair(
        self, task: ProgramTask, asked: Asked, system: Message, previous: AttemptRecord
    ) -> list[Message]:
        """The conversation so far, and what the failed sample case showed."""
        fix = _render("program_repair.md", feedback=previous.feedback or "")
        return [
            *(Message(m["role"], m["content"]) for m in previous.messages),
            Message("assistant", previous.raw_response),
            Message("user", fix),
        ]

    def rejudge(
        self,
        pool: JudgePool,
        task: ProgramTask,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict]:
        return self._judged(pool, task, record.code, asked)

    def references(
        self, pool: JudgePool, task: ProgramTask, asked: Asked
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        if task.reference is None:
            return None, None
        return self._judged(pool, task, task.reference, asked), None


PROGRAM = ProgramKind()
KINDS.register(PROGRAM.name, PROGRAM)
