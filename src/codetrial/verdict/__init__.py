"""Judge a candidate: syntax, gate, then the task's tests in the sandbox.

Visible tests run first; their output is the only feedback a repair may see. Hidden
tests run only when the visible ones pass. The outcome is decided from how each run
ended and from the structured per-test results, never from matching printed text.
"""

from __future__ import annotations

import ast
import json
import signal
from collections.abc import Sequence

from codetrial.config import Limits
from codetrial.gate import Profile, check
from codetrial.records import (
    Candidate,
    GateVerdict,
    Outcome,
    SandboxRun,
    TestResult,
    Verdict,
    Visibility,
)
from codetrial.sandbox import Sandbox, SandboxRequest
from codetrial.tasks import Task, TestFile

RESULTS_FILE = "results.json"
FEEDBACK_CHARS = 4000
_PYTEST = (
    "python", "-I", "-m", "pytest", "-q", "--disable-warnings", "--maxfail=1",
    "-p", "no:cacheprovider", "-p", "codetrial.verdict.pytest_plugin",
)  # fmt: skip


def _results(raw: bytes | None, visibility: Visibility) -> tuple[list[TestResult], bool]:
    if raw is None:
        return [], False
    try:
        data = json.loads(raw)
        tests = [TestResult(visibility=visibility, **t) for t in data["tests"]]
        complete = bool(data["finished"]) and len(tests) == data["collected"] > 0
    except (ValueError, KeyError, TypeError):
        return [], False
    return tests, complete


def classify(
    run: SandboxRun, tests: Sequence[TestResult], complete: bool, cpu_limit_s: float
) -> Outcome:
    """The outcome of one test run, from how the process ended and the per-test results."""
    if run.output_overflow:
        return Outcome.OUTPUT_LIMIT
    if run.timed_out or run.signal == signal.SIGXCPU or run.cpu_s >= cpu_limit_s:
        return Outcome.TIMEOUT
    if any(t.exception_type == "MemoryError" for t in tests):
        return Outcome.MEMORY
    if complete and run.exit_code == 0 and all(t.outcome == "passed" for t in tests):
        return Outcome.PASSED
    if any(t.outcome == "failed" and t.exception_type == "AssertionError" for t in tests):
        return Outcome.FAILED
    return Outcome.ERROR


def _output(run: SandboxRun) -> str:
    return (run.stdout + ("\n" + run.stderr if run.stderr.strip() else "")).strip()


def _run_tests(
    code: str, tests: tuple[TestFile, ...], visibility: Visibility, sandbox: Sandbox, limits: Limits
) -> tuple[Outcome, list[TestResult], SandboxRun]:
    files = {"candidate.py": code, "pytest.ini": "[pytest]\n"}
    files.update({t.name: t.source for t in tests})
    request = SandboxRequest(
        files=files,
        argv=(*_PYTEST, *(t.name for t in tests)),
        limits=limits,
        read_back=(RESULTS_FILE,),
        env={"CODETRIAL_RESULTS": RESULTS_FILE},
    )
    result = sandbox.run(request)
    results, complete = _results(result.files.get(RESULTS_FILE), visibility)
    return classify(result.run, results, complete, limits.cpu_s), results, result.run


def _describe(outcome: Outcome, run: SandboxRun, limits: Limits) -> str:
    if outcome is Outcome.TIMEOUT:
        return f"the test run exceeded {limits.timeout_s:g} s wall or {limits.cpu_s} s CPU"
    if outcome is Outcome.OUTPUT_LIMIT:
        return f"the test run printed more than {limits.output_bytes} bytes"
    if run.signal is not None:
        return f"the test process was killed by signal {signal.Signals(run.signal).name}"
    return ""


def judge(
    candidate: Candidate, task: Task, profile: Profile, sandbox: Sandbox, limits: Limits
) -> Verdict:
    """Decide one candidate's outcome. Rejected or unparsable code is never executed."""
    if candidate.code is None:
        return Verdict(
            Outcome.NO_CODE,
            gate=None,
            feedback="The response contained no Python code block.",
        )
    try:
        tree = ast.parse(candidate.code)
    except SyntaxError as exc:
        message = f"SyntaxError: {exc.msg} (line {exc.lineno})"
        return Verdict(Outcome.SYNTAX_ERROR, gate=None, detail=message, feedback=message)
    gate: GateVerdict = check(tree, task.signature, profile)
    if not gate.allowed:
        message = f"Rejected by the policy gate ({gate.rule_id}): {gate.message}"
        return Verdict(Outcome.REJECTED, gate=gate, detail=message, feedback=message)

    outcome, tests, run = _run_tests(
        candidate.code, task.tests_of(Visibility.VISIBLE), Visibility.VISIBLE, sandbox, limits
    )
    visible_output = _output(run)
    duration = run.duration_s
    if outcome is not Outcome.PASSED:
        return Verdict(
            outcome,
            gate=gate,
            tests=tuple(tests),
            visible_output=visible_output,
            detail=_describe(outcome, run, limits),
            duration_s=duration,
            feedback=(_describe(outcome, run, limits) + "\n" + visible_output)[-FEEDBACK_CHARS:],
        )
    hidden = task.tests_of(Visibility.HIDDEN)
    if not hidden:
        return Verdict(outcome, gate, tuple(tests), visible_output, duration_s=duration)
    outcome, hidden_tests, run = _run_tests(
        candidate.code, hidden, Visibility.HIDDEN, sandbox, limits
    )
    return Verdict(
        outcome,
        gate=gate,
        tests=tuple(tests + hidden_tests),
        visible_output=visible_output,
        hidden_output=_output(run),
        detail=_describe(outcome, run, limits),
        duration_s=duration + run.duration_s,
    )
