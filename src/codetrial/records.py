"""The type spine: every record that passes between the stages of a trial.

Frozen dataclasses travel inside one process; the pydantic models at the bottom are
what the store saves and loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class Outcome(StrEnum):
    """The closed set of ways an attempt can end."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    SYNTAX_ERROR = "syntax_error"
    REJECTED = "rejected"
    NO_CODE = "no_code"
    MALFORMED_EDIT = "malformed_edit"
    INFRA_ERROR = "infra_error"
    TAMPERED = "tampered"  # a run whose tests or its channel show interference
    OVERFLOW = "overflow"  # a prompt that cannot fit the model's context window
    ANSWERED = "answered"  # a question with no right answer to score against


class TestOutcome(StrEnum):
    """How one test ended, as its runner reported it."""

    __test__: ClassVar[bool] = False

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


class Visibility(StrEnum):
    """Visible tests may be shown to a model during repair; hidden tests never are."""

    VISIBLE = "visible"
    HIDDEN = "hidden"


@dataclass(frozen=True)
class Message:
    role: str
    content: str


def wire(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Messages as chat APIs and the store take them."""
    return [{"role": m.role, "content": m.content} for m in messages]


@dataclass(frozen=True)
class GenerationOptions:
    """Sampling conditions sent to every backend; recorded in the manifest."""

    temperature: float
    seed: int
    max_tokens: int
    num_ctx: int
    think: bool


CUT_OFF = "length"  # the finish reason of a reply stopped at a token limit


@dataclass(frozen=True)
class Generation:
    """What a backend answered, untouched."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    duration_s: float
    finish_reason: str | None = None
    logprob_sum: float | None = None
    logprob_tokens: int | None = None
    memory_kb: int | None = None  # the model's process's resident memory after it, if known

    def then(self, reply: Generation) -> Generation:
        """This generation and the `reply` that followed it in one try, as one: this
        one's text, the tokens and seconds of both, the memory after the reply."""
        prompt = (self.prompt_tokens, reply.prompt_tokens)
        completion = (self.completion_tokens, reply.completion_tokens)
        return Generation(
            text=self.text,
            prompt_tokens=None if None in prompt else sum(p or 0 for p in prompt),
            completion_tokens=None if None in completion else sum(c or 0 for c in completion),
            duration_s=self.duration_s + reply.duration_s,
            finish_reason=self.finish_reason,
            memory_kb=reply.memory_kb,
        )


class Suspect(BaseModel):
    """A line a candidate added or changed that reaches into the test machinery, as
    the static scan found it (see `codetrial.gate.scan`): the file, the line (from 1),
    the rule's id, what was found, and the line's text. Recorded and counted; never a
    verdict by itself."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int
    rule: str
    message: str
    text: str = ""


@dataclass(frozen=True)
class Candidate:
    """What a response proposes, one of: for a function task (and a question), the
    `code` extracted from it (None when the response held no code); for a workspace
    task, `files`: the editable files as the response leaves them (as they were when
    its edit could not be applied); for a repository task, the `patch` its edit makes
    to the repository (beside `files`, the excerpts as it left them). `suspects`:
    what the static scan found in what it changed (workspace and repository tasks)."""

    raw: str
    code: str | None
    files: dict[str, str] | None = None
    patch: str | None = None
    suspects: tuple[Suspect, ...] = ()


@dataclass(frozen=True)
class GateVerdict:
    """The static policy's decision; `rule_id` and `message` are set when rejected."""

    allowed: bool
    rule_id: str | None = None
    message: str | None = None
    line: int | None = None


class TestResult(BaseModel):
    """One test function's result, as the test runner reported it."""

    __test__: ClassVar[bool] = False
    model_config = ConfigDict(frozen=True)

    name: str
    visibility: Visibility
    outcome: TestOutcome
    exception_type: str | None = None
    duration_s: float = 0.0
    group: str | None = None  # a repository task's FAIL_TO_PASS or PASS_TO_PASS


FAIL_TO_PASS, PASS_TO_PASS = "FAIL_TO_PASS", "PASS_TO_PASS"


def holds(result: TestResult) -> bool:
    """Whether a repository task's listed test counts as passing, as SWE-bench grades
    it: a FAIL_TO_PASS test must pass; a PASS_TO_PASS test may also be skipped."""
    kept = (TestOutcome.PASSED, TestOutcome.SKIPPED) if result.group == PASS_TO_PASS else ()
    return result.outcome is TestOutcome.PASSED or result.outcome in kept


def group_counts(results: Sequence[TestResult]) -> dict[str, tuple[int, int]]:
    """(passing, total) of a repository task's FAIL_TO_PASS and PASS_TO_PASS tests."""
    counts = {}
    for group in (FAIL_TO_PASS, PASS_TO_PASS):
        mine = [r for r in results if r.group == group]
        counts[group] = (sum(holds(r) for r in mine), len(mine))
    return counts


class Usage(BaseModel):
    """What a candidate's test runs used, from the kernel's accounting of their
    processes: CPU seconds, summed over the runs, and peak resident memory in KiB,
    the largest run's (the interpreter's own pages included)."""

    model_config = ConfigDict(frozen=True)

    cpu_s: float
    peak_kb: int


@dataclass(frozen=True)
class Verdict:
    """The outcome of judging one candidate, with the evidence behind it."""

    outcome: Outcome
    gate: GateVerdict | None
    tests: tuple[TestResult, ...] = ()
    visible_output: str = ""
    hidden_output: str = ""
    detail: str = ""
    feedback: str | None = None
    phases: tuple[tuple[str, float], ...] = ()  # wall seconds of the judging's parts
    usage: Usage | None = None  # None when a run was stopped before it could be measured
    program: ProgramRecord | None = None  # a question's round: what its program left
    written: Mapping[str, bytes] = field(default_factory=dict)  # the files it wrote
    asks: str | None = None  # what the model is asked next, before the verdict is final


class ProgramRecord(BaseModel):
    """A question's round, besides its code: what the program left (its output, the
    names of the files it wrote, its exception, its saved charts' data), `failed`:
    what the model was told of its failure (None when it ran to an exit of 0, or did
    not run), and the final reply, when the round ended in one, with its check."""

    model_config = ConfigDict(frozen=True)

    mode: str
    failed: str | None = None
    stdout: str = ""
    stderr: str = ""
    raised: dict[str, str] | None = None
    files: list[str] = []
    skipped: list[str] = []
    figures: list[dict[str, Any]] = []
    reply: str | None = None
    answer: str | None = None
    check: str = ""


def labelled(model: str, mode: str | None) -> str:
    """What a model's attempts are shown under: its name, and for questions the mode
    they were answered in."""
    return model if mode is None else f"{model} ({mode})"


class AttemptRecord(BaseModel):
    """One generation and its verdict, as stored. Attempt 0 is the first try. What
    was judged is the candidate's (see Candidate): `code`, `files` or `patch`. A
    question's round has the `mode` it was answered in. `finish_reason` is why the
    backend ended the reply ("stop", or "length" when cut off at a token limit; for a
    question's round, its program's reply), None when it did not say or for runs
    stored before it was kept."""

    model_config = ConfigDict(frozen=True)

    model: str
    mode: str | None = None
    task_id: str
    attempt: int
    sample: int = 0
    messages: list[dict[str, str]] = []
    raw_response: str
    code: str | None
    files: dict[str, str] | None = None
    patch: str | None = None
    gate_allowed: bool | None = None
    gate_rule: str | None = None
    gate_message: str | None = None
    outcome: Outcome
    tests: list[TestResult] = []
    visible_output: str = ""
    hidden_output: str = ""
    detail: str = ""
    feedback: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    generation_s: float = 0.0
    execution_s: float = 0.0
    phases: dict[str, float] = {}
    usage: Usage | None = None
    logprob_sum: float | None = None
    logprob_tokens: int | None = None
    model_memory_kb: int | None = None
    program: ProgramRecord | None = None
    suspects: list[Suspect] = []

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    @property
    def label(self) -> str:
        return labelled(self.model, self.mode)

    @property
    def cut_off(self) -> bool:
        """Whether the reply stopped at a token limit (the run's --max-tokens or the
        context window) rather than where the model ended it."""
        return self.finish_reason == CUT_OFF

    @property
    def mean_logprob(self) -> float | None:
        """The response's length-normalised log-likelihood, when the backend gave one."""
        if self.logprob_sum is None or not self.logprob_tokens:
            return None
        return self.logprob_sum / self.logprob_tokens

    @classmethod
    def judged(
        cls,
        verdict: Verdict,
        candidate: Candidate,
        *,
        model: str,
        task_id: str,
        sample: int,
        attempt: int = 0,
        mode: str | None = None,
        messages: Sequence[Message] = (),
        generation: Generation | None = None,
        execution_s: float = 0.0,
    ) -> AttemptRecord:
        """The stored form of a verdict on a candidate, with its generation when any."""
        gate = verdict.gate
        return cls(
            model=model,
            mode=mode,
            task_id=task_id,
            sample=sample,
            attempt=attempt,
            messages=wire(messages),
            raw_response=candidate.raw,
            code=candidate.code,
            files=candidate.files,
            patch=candidate.patch,
            gate_allowed=gate.allowed if gate else None,
            gate_rule=gate.rule_id if gate else None,
            gate_message=gate.message if gate else None,
            outcome=verdict.outcome,
            tests=list(verdict.tests),
            visible_output=verdict.visible_output,
            hidden_output=verdict.hidden_output,
            detail=verdict.detail,
            feedback=verdict.feedback,
            prompt_tokens=generation.prompt_tokens if generation else None,
            completion_tokens=generation.completion_tokens if generation else None,
            finish_reason=generation.finish_reason if generation else None,
            generation_s=generation.duration_s if generation else 0.0,
            execution_s=execution_s,
            phases=dict(verdict.phases),
            usage=verdict.usage,
            logprob_sum=generation.logprob_sum if generation else None,
            logprob_tokens=generation.logprob_tokens if generation else None,
            model_memory_kb=generation.memory_kb if generation else None,
            program=verdict.program,
            suspects=list(candidate.suspects),
        )


@dataclass(frozen=True)
class TaskResult:
    """One sample's first attempt and the repairs that followed it; `model` is what
    they are shown under (see `labelled`)."""

    model: str
    task_id: str
    sample: int
    first: AttemptRecord
    repairs: tuple[AttemptRecord, ...] = field(default=())

    @property
    def attempts(self) -> tuple[AttemptRecord, ...]:
        """The first attempt and its repairs, in the order they were made."""
        return (self.first, *self.repairs)

    @property
    def final(self) -> AttemptRecord:
        return self.repairs[-1] if self.repairs else self.first

    @property
    def passed_after_repair(self) -> bool:
        return self.first.passed or self.final.passed
