"""Workspace tasks: a folder of files the model edits in an edit format; the candidate
is the files as its edits leave them, judged by the task's own tests, which reach its
objects from a sandbox of their own (trust level "trusted-side"; "in-sandbox" for
tests that read their callers' frames, which run beside the files). A response whose
edit cannot be applied is a malformed_edit, judged here without the sandbox."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

from codetrial.config import WORKSPACE_DEFAULTS, RunConfig
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import ConfigError
from codetrial.gate import Profile, scan_files
from codetrial.kinds.base import KINDS, Asked, Kind, KindedTask, output_of
from codetrial.prompts import (
    WORKSPACE_TEMPLATES,
    workspace_messages,
    workspace_repair_messages,
    workspace_system,
)
from codetrial.records import AttemptRecord, Candidate, Message, Verdict
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict.polyglot import count_tests, judge_native
from codetrial.verdict.pool import JudgePool, Prepared, settled
from codetrial.verdict.toolchains import find_toolchain
from codetrial.verdict.workspace import apply_edit, changes, judge_workspace

T = TypeVar("T", bound=KindedTask)


class Edited(Kind[T]):
    """A kind whose tasks are answered by edits to files, in the run's edit format."""

    edits = True

    def gate(self, suite: str, tasks: Sequence[T], gate: str | None) -> str:
        """Only "off": the files are modules with classes and state, which the function
        profiles forbid; the sandbox is their boundary."""
        if gate not in (None, "off"):
            raise ConfigError(
                f"suite {suite!r} holds {self.described}, whose files are modules with "
                "classes and state that the function gate profiles forbid: judge them with "
                "--gate off (the sandbox is their boundary)"
            )
        return gate or tasks[0].policy

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        return (*WORKSPACE_TEMPLATES, f"edits/{config.edit_format}.md")

    def system(self, config: RunConfig, profile: Profile, libraries: Sequence[str]) -> Message:
        return workspace_system(EDIT_FORMATS.get(config.edit_format or "whole").template)


class WorkspaceKind(Edited[WorkspaceTask]):
    name = "workspace"
    described = "workspace tasks (files edited in an edit format)"
    commands = "`codetrial run` or `codetrial check`"
    defaults = WORKSPACE_DEFAULTS

    def prepare(
        self, tasks: Sequence[WorkspaceTask], repos: Path | None, wheels: Path | None, command: str
    ) -> Prepared:
        """The toolchains of the tasks' languages other than Python; a ConfigError
        says how to install one that is missing."""
        languages = sorted({task.language for task in tasks} - {"python"})
        return Prepared(None, {}, {}, toolchains=tuple(map(find_toolchain, languages)))

    def row(self, task: WorkspaceTask) -> tuple[str, str, str]:
        tests = f"{count_tests(task)} tests, unseen"
        return ("edit " + ", ".join(task.editable), tests, "yes" if task.reference else "no")

    def asked_text(self, task: WorkspaceTask) -> str:
        return task.instructions

    def artifacts(self, task: WorkspaceTask, record: AttemptRecord, label: str) -> dict[str, str]:
        """The files as the attempt left them and their changes against the task's."""
        kept = output_of(record, label)
        if record.code is not None:
            kept[f"candidate_{label}.py"] = record.code
        if record.files is not None:
            for path, text in record.files.items():
                kept[f"files_{label}/{path}"] = text
            kept[f"changes_{label}.diff"] = changes(dict(task.files), record.files)
        if record.attempt == 0 and record.sample == 0:
            for test in task.tests:
                kept[f"tests/{test.name}"] = test.source
        return kept

    def recorded(self, task: WorkspaceTask) -> dict[str, dict[str, object]]:
        return {"workspaces": {task.id: dict(task.files)}}

    def opening(
        self, task: WorkspaceTask, asked: Asked, system: Message, continues: bool
    ) -> list[Message]:
        return workspace_messages(task, system)

    def respond(
        self,
        pool: JudgePool,
        task: WorkspaceTask,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        files, malformed = apply_edit(text, task, asked.edit_format, workspace)
        suspects = tuple(scan_files(dict(task.files), files))
        candidate = Candidate(text, None, files, suspects=suspects)
        if malformed is not None:
            return candidate, settled(malformed)
        return candidate, judged(pool, files, task)

    def repair(
        self, task: WorkspaceTask, asked: Asked, system: Message, previous: AttemptRecord
    ) -> list[Message]:
        return repaired(task, previous)

    def rejudge(
        self,
        pool: JudgePool,
        task: WorkspaceTask,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict]:
        return self.respond(pool, task, record.raw_response, asked, workspace)[1]

    def references(
        self, pool: JudgePool, task: WorkspaceTask, asked: Asked
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        start = judged(pool, dict(task.files), task)
        if not task.reference:
            return None, start
        return judged(pool, dict(task.files) | dict(task.reference), task), start


def judged(pool: JudgePool, files: dict[str, str], task: WorkspaceTask) -> Future[Verdict]:
    """The verdict on the files a workspace candidate leaves, to come: judged once
    per task and files; by its own tests in Python, else by its language's build
    and test runner."""
    key = (task.digest, "workspace", json.dumps(files, sort_keys=True))
    judge = judge_workspace if task.language == "python" else judge_native
    return pool.judge_with(key, lambda sandbox, limits: judge(files, task, sandbox, limits))


def repaired(shown: WorkspaceTask, previous: AttemptRecord) -> list[Message]:
    """The next try after `previous`, as aider's benchmark continues it: the
    conversation so far, the files as the last try left them and the trimmed output
    of the tests (which the model never sees themselves)."""
    assert previous.feedback is not None and previous.files is not None
    messages = [Message(m["role"], m["content"]) for m in previous.messages]
    return workspace_repair_messages(
        shown, messages, previous.raw_response, previous.files, previous.feedback
    )


WORKSPACE = WorkspaceKind()
KINDS.register(WORKSPACE.name, WORKSPACE)
