"""Each kind of task lives in one place: no stage tests which class a task is, and a
new kind is one module and one registration, run end to end here through the real
pipeline, sandbox, store, report and rerun with the scripted backend."""

from __future__ import annotations

import ast
import hashlib
import json
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

import codetrial
from codetrial.config import FUNCTION_DEFAULTS, Limits, RunConfig
from codetrial.errors import ConfigError
from codetrial.kinds import KINDS, Asked, Kind, Suite, kind_of, load_suite
from codetrial.kinds.base import output_of
from codetrial.models.scripted import ScriptedBackend
from codetrial.records import AttemptRecord, Candidate, Message, Outcome, Verdict
from codetrial.rerun import rejudge
from codetrial.sandbox import Sandbox
from codetrial.tasks.loader import SOURCES
from codetrial.verdict.pool import JudgePool

PACKAGE = Path(codetrial.__file__).parent
TASK_CLASSES = {"Task", "WorkspaceTask", "RepositoryTask", "QuestionTask"}


def _names(node: ast.expr) -> set[str]:
    """The class names an isinstance's second argument mentions (a name, a dotted
    name, a tuple or a union of them)."""
    return {
        n.id if isinstance(n, ast.Name) else n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Name | ast.Attribute)
    }


def test_no_stage_asks_which_class_a_task_is() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "kinds" or "suites" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass")
                and len(node.args) == 2
                and _names(node.args[1]) & TASK_CLASSES
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == [], "ask the task's kind (codetrial.kinds) instead: " + ", ".join(found)


def test_every_built_in_kind_is_registered_and_named_by_its_tasks() -> None:
    assert KINDS.names()[:6] == [
        "function",
        "workspace",
        "repository",
        "question",
        "program",
        "prediction",
    ]
    for suite, kind in (
        ("contracts10", "function"),
        ("dataqa", "question"),
        ("programs", "program"),
        ("programs-output", "prediction"),
        ("programs-execution", "prediction"),
    ):
        tasks = load_suite(suite)
        assert tasks.kind.name == kind and kind_of(tasks[0]) is tasks.kind
        assert tasks[:2].kind is tasks.kind and list(tasks[:2]) == list(tasks)[:2]


def test_a_suite_of_two_kinds_is_refused_with_what_to_do() -> None:
    mixed = [*load_suite("contracts10")[:1], *load_suite("dataqa")[:1]]
    with pytest.raises(ConfigError, match=r"mixes kinds of task .* run each kind as a suite"):
        Suite.of("mixed", mixed)
    with pytest.raises(ConfigError, match=r"harden takes function tasks; suite 'dataqa' holds q"):
        load_suite("dataqa").only(KINDS.get("function"), "codetrial harden")
    with pytest.raises(ConfigError, match=r"unknown kind of task 'functoin'.*function"):
        KINDS.get("functoin")


# Another kind: a question answered by a program whose printed output is the answer.


@dataclass(frozen=True)
class PrintedTask:
    id: str
    suite: str
    question: str
    expected: str
    policy: str = "off"
    kind: ClassVar[str] = "printed"
    trust: ClassVar[str] = "trusted-side"

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.question}\0{self.expected}".encode()).hexdigest()


def _printed(task: PrintedTask, code: str, sandbox: Sandbox, limits: Limits) -> Verdict:
    """The program runs in the sandbox; what it printed is compared here."""
    with sandbox.program(code) as run:
        pass
    printed = run.left.stdout.strip()
    if run.stop is None and printed == task.expected:
        return Verdict(Outcome.PASSED, gate=None)
    said = f"The program printed {printed!r}; {task.question}"
    return Verdict(Outcome.FAILED, gate=None, detail=said, feedback=said)


class PrintedKind(Kind[PrintedTask]):
    name = "printed"
    described = "printed answers"
    commands = "`codetrial run`"
    defaults = FUNCTION_DEFAULTS

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        return ()

    def row(self, task: PrintedTask) -> tuple[str, str, str]:
        return task.question, "what the program prints", "no"

    def asked_text(self, task: PrintedTask) -> str:
        return task.question

    def artifacts(self, task: PrintedTask, record: AttemptRecord, label: str) -> dict[str, str]:
        return output_of(record, label) | {f"program_{label}.py": record.code or ""}

    def system(self, config: RunConfig, profile: object, libraries: object) -> Message:  # type: ignore[override]
        return Message("system", "Answer with a Python program that prints the answer.")

    def opening(
        self, task: PrintedTask, asked: Asked, system: Message, continues: bool
    ) -> list[Message]:
        return [system, Message("user", task.question)]

    def respond(
        self,
        pool: JudgePool,
        task: PrintedTask,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        key = (task.digest, self.name, text)
        return Candidate(text, text), pool.judge_with(
            key, lambda sandbox, limits: _printed(task, text, sandbox, limits)
        )

    def repair(
        self, task: PrintedTask, asked: Asked, system: Message, previous: AttemptRecord
    ) -> list[Message]:
        return [system, Message("user", previous.feedback or task.question)]

    def rejudge(
        self,
        pool: JudgePool,
        task: PrintedTask,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict]:
        return self.respond(pool, task, record.raw_response, asked)[1]


PRINTED_TASKS = (
    PrintedTask("sum", "printed", "What is 2 + 3?", "5"),
    PrintedTask("word", "printed", "Which word is 'tac' reversed?", "cat"),
)
KINDS.register("printed", PrintedKind())
SOURCES.register("printed", lambda data: list(PRINTED_TASKS))


def test_a_new_kind_runs_end_to_end_from_one_module_and_one_registration(tmp_path: Path) -> None:
    backend = ScriptedBackend(
        {
            "2 + 3": ["print(2 + 2)", "print(2 + 3)"],
            "reversed": ["print('tac'[::-1])"],
        },
        "scripted/printed",
    )
    run = codetrial.run(
        "printed",
        ["scripted/printed"],
        runs_dir=tmp_path,
        name="toy",
        backends={"scripted/printed": backend},
    )
    table = {row["task_id"]: row for row in run.table()}
    assert table["sum"]["outcome"] == "failed" and table["sum"]["passed_after_repair"]
    assert table["word"]["outcome"] == "passed"
    assert backend.requests[-1][-1].content == "The program printed '4'; What is 2 + 3?"
    assert run.manifest.trust == {"sum": "trusted-side", "word": "trusted-side"}
    kept = run.path / "generated_code" / "scripted_printed" / "sum"
    assert (kept / "program_repaired.py").read_text() == "print(2 + 3)"
    assert "printed '4'" in (kept / "test_output_first.txt").read_text()
    assert "sum" in (run.path / "report.html").read_text()
    again = rejudge(run.path, workers=1)
    assert again.identical and sum(t.judged for t in again.tallies) == 3
    assert json.loads((run.path / "results.json").read_text())
