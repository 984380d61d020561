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

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from codetrial.kinds import kind_of
from codetrial.records import AttemptRecord
from codetrial.tasks import AnyTask


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


def write_attempt(
    run_dir: Path, task: AnyTask, record: AttemptRecord, written: Mapping[str, bytes] = {}
) -> None:
    """The attempt's response, the files its task's kind keeps of it, and those its
    program `written`, when it ran one."""
    folder = task_dir(run_dir, record.label, task.id)
    label = attempt_label(record.attempt, record.sample)
    write_atomic(folder / f"response_{label}.txt", record.raw_response)
    for path, text in kind_of(task).artifacts(task, record, label).items():
        write_atomic(folder / path, text)
    if written:
        write_outputs(folder / f"outputs_{label}", written)


def outputs_dir(run_dir: Path, model: str, task_id: str, attempt: int, sample: int = 0) -> Path:
    """Where the files a question's program wrote are kept (`model` with its mode)."""
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
