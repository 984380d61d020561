"""Judge a candidate: syntax, gate, then the task's tests against the sandboxed child.

Visible tests run first; their output is the only feedback a repair may see. Hidden
tests run, in a fresh child, only when the visible ones pass. The outcome is decided
on the trusted side, from how the sandbox stopped the child (if it did) and from the
structured per-test results, never from anything the candidate printed or exited with.
"""

from __future__ import annotations

from collections.abc import Sequence

from codetrial.config import Limits
from codetrial.errors import TaskFormatError
from codetrial.gate import Profile, check
from codetrial.records import (
    Candidate,
    GateVerdict,
    Outcome,
    TestOutcome,
    TestResult,
    Usage,
    Verdict,
    Visibility,
)
from codetrial.sandbox import ChildExit, Sandbox, Session, Stop, TestRun
from codetrial.syntax import described, parse
from codetrial.tasks import Task
from codetrial.verdict.harness import HARNESSES

FEEDBACK_CHARS = 4000
STOP_OUTCOMES = {
    Stop.TIMEOUT: Outcome.TIMEOUT,
    Stop.MEMORY: Outcome.MEMORY,
    Stop.OUTPUT_LIMIT: Outcome.OUTPUT_LIMIT,
    Stop.CRASH: Outcome.ERROR,
}


def classify(stop: Stop | None, tests: Sequence[TestResult], complete: bool) -> Outcome:
    """The outcome of one test run: a limit that stopped the child wins; otherwise
    every collected test must have run and passed."""
    if stop is not None:
        return STOP_OUTCOMES[stop]
    if any(t.exception_type == "MemoryError" for t in tests):
        return Outcome.MEMORY
    if complete and tests and all(t.outcome is TestOutcome.PASSED for t in tests):
        return Outcome.PASSED
    failed = (t for t in tests if t.outcome is TestOutcome.FAILED)
    if any(t.exception_type == "AssertionError" for t in failed):
        return Outcome.FAILED
    return Outcome.ERROR


def stopped_or_tampered(
    run: TestRun, tampering: Sequence[str], tail: str
) -> tuple[Outcome, str] | None:
    """The outcome and detail of an in-sandbox test run that its results do not
    decide: one a limit stopped, or else one with evidence of `tampering`, whose
    detail is that evidence then the run's `tail`. None when its results decide."""
    if run.stop is not None:
        return STOP_OUTCOMES[run.stop], f"{run.stop.value}: {run.stop_detail}"
    if tampering:
        return Outcome.TAMPERED, "\n".join(["the tests' results were forged:", *tampering, tail])
    return None


def usage_of(exits: Sequence[ChildExit | None]) -> Usage | None:
    """The test runs' usage, when every one of them was measured."""
    if not exits or any(e is None for e in exits):
        return None
    measured = [e for e in exits if e is not None]
    return Usage(cpu_s=sum(e.cpu_s for e in measured), peak_kb=max(e.peak_kb for e in measured))


def _detail(session: Session) -> str:
    if session.stop is not None:
        return f"{session.stop.value}: {session.stop_detail}"
    if session.load_error:
        return f"the candidate failed to load: {session.load_error}"
    return ""


def _run_tests(
    code: str, task: Task, visibility: Visibility, sandbox: Sandbox, limits: Limits
) -> tuple[Outcome, list[TestResult], str, str, ChildExit | None]:
    if task.harness not in HARNESSES:
        raise TaskFormatError(f"task {task.id}: {HARNESSES.unknown(task.harness)}")
    harness = HARNESSES.get(task.harness)
    with sandbox.session(task.program(code), limits) as session:
        recorder, output = harness(task, visibility, session)
    outcome = classify(session.stop, recorder.results, recorder.complete)
    return outcome, recorder.results, output.strip(), _detail(session), session.exit


def judge(
    candidate: Candidate, task: Task, profile: Profile, sandbox: Sandbox, limits: Limits
) -> Verdict:
    """Decide one candidate's outcome. Rejected or unparsable code is never executed."""
    if candidate.code is None:
        return Verdict(
            Outcome.NO_CODE, gate=None, feedback="The response contained no Python code block."
        )
    try:
        tree = parse(candidate.code)
    except SyntaxError as exc:
        message = described(exc)
        return Verdict(Outcome.SYNTAX_ERROR, gate=None, detail=message, feedback=message)
    gate: GateVerdict = check(tree, task.signature, profile)
    if not gate.allowed:
        message = f"Rejected by the policy gate ({gate.rule_id}): {gate.message}"
        return Verdict(Outcome.REJECTED, gate=gate, detail=message, feedback=message)

    results: list[TestResult] = []
    exits: list[ChildExit | None] = []
    outputs = {Visibility.VISIBLE: "", Visibility.HIDDEN: ""}
    outcome, detail = Outcome.ERROR, "the task has no tests"
    for visibility in (Visibility.VISIBLE, Visibility.HIDDEN):
        if not task.tests_of(visibility):
            continue
        outcome, tests, outputs[visibility], detail, ended = _run_tests(
            candidate.code, task, visibility, sandbox, limits
        )
        results.extend(tests)
        exits.append(ended)
        if outcome is not Outcome.PASSED:
            break
    feedback = None
    if (
        outcome is not Outcome.PASSED
        and outputs[Visibility.VISIBLE]
        and not outputs[Visibility.HIDDEN]
    ):
        feedback = f"{detail}\n{outputs[Visibility.VISIBLE]}".strip()[-FEEDBACK_CHARS:]
    return Verdict(
        outcome,
        gate=gate,
        tests=tuple(results),
        visible_output=outputs[Visibility.VISIBLE],
        hidden_output=outputs[Visibility.HIDDEN],
        detail=detail,
        feedback=feedback,
        usage=usage_of(exits),
    )
