"""The artifact tree: generated_code/<model>/<task>/ with code, tests and raw outputs.

A workspace attempt keeps its files as `files_<label>/<path>` and their changes
against the task's starting files as `changes_<label>.diff` (a response whose edit
could not be applied changed nothing: its files are those the try before left). A
repository attempt keeps its patch as `patch_<label>.diff`, and the task's test patch
(never shown to the model) once as `test_patch.diff`. A question's round keeps its
program as `candidate_<label>.py`, what it printed as `output_<label>.txt`, the
files it wrote as `outputs_<label>/<name>` and the final reply as `reply_<label>.txt`.

Files are written atomically (temporary file, then rename), so a crash leaves either
the old file or the new one.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from codetrial.records import AttemptRecord, Visibility
from codetrial.tasks import AnyTask, QuestionTask, RepositoryTask, WorkspaceTask


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "_"


def attempt_label(attempt: int, sample: int = 0) -> str:
    label = "first" if attempt == 0 else ("repaired" if attempt == 1 else f"repaired_{attempt}")
    return label if sample == 0 else f"s{sample}_{label}"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


J = TypeVar("J", dict[str, Any], list[Any])


def read_json(path: Path, kind: type[J]) -> J:
    """A JSON file written by codetrial, or an empty `kind` when it is missing,
    malformed or of another kind: a cache or an optional section, never an error."""
    if not path.is_file():
        return kind()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return kind()
    return data if isinstance(data, kind) else kind()


def task_dir(run_dir: Path, model: str, task_id: str) -> Path:
    return run_dir / "generated_code" / slug(model) / slug(task_id)


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    """A unified diff, file by file, of what `after` changed in `before` (path -> text)."""
    parts: list[str] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path, ""), after.get(path, "")
        if old != new:
            lines = difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                f"a/{path}" if path in before else "/dev/null", f"b/{path}",
            )  # fmt: skip
            parts.extend(lines)
    return "".join(line if line.endswith("\n") else line + "\n" for line in parts)


def write_attempt(run_dir: Path, task: AnyTask, record: AttemptRecord) -> None:
    folder = task_dir(run_dir, record.model, task.id)
    label = attempt_label(record.attempt, record.sample)
    write_atomic(folder / f"response_{label}.txt", record.raw_response)
    if isinstance(task, RepositoryTask):
        write_atomic(folder / f"patch_{label}.diff", record.code or "")
    elif record.code is not None:
        write_atomic(folder / f"candidate_{label}.py", record.code)
    if isinstance(task, QuestionTask):
        _write_round(folder, label, record)
        return
    output = record.visible_output + (
        "\n\n# hidden tests\n" + record.hidden_output if record.hidden_output else ""
    )
    write_atomic(folder / f"test_output_{label}.txt", output or record.detail)
    if isinstance(task, WorkspaceTask):
        _write_workspace(folder, label, task, record)
    elif isinstance(task, RepositoryTask):
        if record.attempt == 0 and record.sample == 0:
            write_atomic(folder / "test_patch.diff", task.test_patch)
    elif record.attempt == 0 and record.sample == 0:
        visible = "\n\n".join(t.source for t in task.tests_of(Visibility.VISIBLE))
        write_atomic(folder / "test_candidate.py", visible)
        hidden = task.tests_of(Visibility.HIDDEN)
        if hidden:
            write_atomic(folder / "test_hidden.py", "\n\n".join(t.source for t in hidden))


def _write_round(folder: Path, label: str, record: AttemptRecord) -> None:
    program = record.program
    if program is None:
        return
    if record.code is not None:
        write_atomic(folder / f"output_{label}.txt", f"{program.stdout}\n{program.stderr}".strip())
    if program.reply is not None:
        write_atomic(folder / f"reply_{label}.txt", program.reply)


def outputs_dir(run_dir: Path, model: str, task_id: str, attempt: int, sample: int = 0) -> Path:
    """Where the files a question's program wrote are kept."""
    return task_dir(run_dir, model, task_id) / f"outputs_{attempt_label(attempt, sample)}"


def write_outputs(folder: Path, files: Mapping[str, bytes]) -> None:
    """The files a program wrote (names relative to its output folder), each
    written atomically; a name that would leave `folder` is not written."""
    for name, data in files.items():
        path = (folder / name).resolve()
        if not path.is_relative_to(folder.resolve()):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_bytes(data)
        os.replace(partial, path)


def _write_workspace(folder: Path, label: str, task: WorkspaceTask, record: AttemptRecord) -> None:
    if record.files is not None:
        for path, text in record.files.items():
            write_atomic(folder / f"files_{label}" / path, text)
        write_atomic(folder / f"changes_{label}.diff", changes(dict(task.files), record.files))
    if record.attempt == 0 and record.sample == 0:
        for test in task.tests:
            write_atomic(folder / "tests" / test.name, test.source)
