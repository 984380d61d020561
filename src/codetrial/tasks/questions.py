"""Question tasks: data-analysis questions answered by a program the model writes.

A question suite is a folder holding `questions.jsonl`, the files its questions are
asked about in `data/`, and optionally `packages.txt` (the libraries programs may
import, one pip requirement a line; by default numpy, pandas and matplotlib). One
question a line:

    {"id": "sales-total", "question": "What is ...? Round to 2 decimals.",
     "files": ["sales.csv"],
     "answer": {"kind": "number", "value": 1234.5, "tolerance": 0.01},
     "reference": "import pandas as pd\\n..."}

`answer` is what is right, checked on the trusted side (see
`codetrial.verdict.answers`): a "number" within an absolute `tolerance`, a
"string" (case and surrounding space ignored), a "list" (`ordered` or not), or a
"series": the values plotted in the chart the program saved as `file`. A question
may leave `answer` out: it is then asked, and its answers stored, but not scored.
`reference` is a program that answers it, reading the files in /data and printing
the answer last (optional; `codetrial check --references` runs it).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from codetrial.errors import ConfigError, TaskFormatError
from codetrial.tasks.files import read_task_file
from codetrial.tasks.jsonl import read_jsonl

QUESTIONS = "questions.jsonl"
DATA = "data"
PACKAGES = "packages.txt"
DATA_PACKAGES: tuple[str, ...] = ("matplotlib==3.11.2", "numpy==2.4.6", "pandas==3.1.1")
ANSWER_KINDS = ("number", "string", "list", "series")


@dataclass(frozen=True)
class Answer:
    """The right answer to a question (see the module's docstring)."""

    kind: str
    value: Any
    tolerance: float = 0.0
    ordered: bool = True
    file: str = ""

    @classmethod
    def parse(cls, data: Any, where: str) -> Answer:
        if not isinstance(data, dict) or data.get("kind") not in ANSWER_KINDS:
            raise TaskFormatError(
                f"{where}: field 'answer' must be an object whose kind is one of "
                f"{', '.join(ANSWER_KINDS)}"
            )
        kind, value, tolerance = data["kind"], data.get("value"), data.get("tolerance", 0.0)
        if kind == "number" and not _is_number(value):
            raise TaskFormatError(f"{where}: a number answer's value must be a number")
        if kind in ("list", "series") and not isinstance(value, list):
            raise TaskFormatError(f"{where}: a {kind} answer's value must be a list")
        if kind == "series" and not (data.get("file") and all(map(_is_number, value or []))):
            raise TaskFormatError(
                f"{where}: a series answer is numbers, and names its chart's file"
            )
        if not _is_number(tolerance) or tolerance < 0:
            raise TaskFormatError(f"{where}: an answer's tolerance must be a number, 0 or more")
        return cls(
            kind,
            value if kind != "string" else str(value),
            float(tolerance),
            bool(data.get("ordered", True)),
            str(data.get("file", "")),
        )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class QuestionTask:
    """One question about `files` (paths on the host, bound read-only into the
    sandbox). `packages` are the libraries its programs may import."""

    id: str
    suite: str
    question: str
    files: tuple[Path, ...]
    answer: Answer | None
    packages: tuple[str, ...]
    reference: str | None = None
    trust: ClassVar[str] = "trusted-side"
    policy: ClassVar[str] = "program"
    kind: ClassVar[str] = "question"

    @property
    def digest(self) -> str:
        """Changes whenever the question, its files, its answer or its packages do."""
        digest = hashlib.sha256(
            json.dumps(
                [self.question, self.answer and vars(self.answer), self.packages], default=str
            ).encode()
        )
        for path in self.files:
            digest.update(f"\0{path.name}\0".encode() + path.read_bytes())
        return digest.hexdigest()


def requirements(text: str) -> tuple[str, ...]:
    """The requirements in a requirements text: one a line, # for comments; sorted,
    since their order changes nothing."""
    lines = (line.split("#")[0].strip() for line in text.splitlines())
    return tuple(sorted(line for line in lines if line))


def text_file(path: Path) -> Path:
    """`path`, when it is a text file a question can be asked about; a ConfigError
    says what is wrong with it otherwise."""
    if not path.is_file():
        raise ConfigError(f"no file {path}: pass the path of a data file (CSV, JSON, text)")
    with path.open("rb") as handle:
        start = handle.read(65536)
    try:
        start.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(start) - 4:  # not a character cut at the end of the sample
            start = b"\0"
    if b"\0" in start:
        raise ConfigError(
            f"{path} is not a text file: questions are asked about text data (CSV, JSON, "
            "text); export it as CSV first"
        )
    return path


def write_question_suite(
    folder: Path, question: str, files: Sequence[Path], packages: Sequence[str]
) -> None:
    """A question suite of one question about copies of `files`, in `folder`."""
    (folder / DATA).mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copyfile(path, folder / DATA / path.name)
    record = {"id": "question", "question": question, "files": [p.name for p in files]}
    (folder / QUESTIONS).write_text(json.dumps(record) + "\n", encoding="utf-8")
    (folder / PACKAGES).write_text("".join(f"{p}\n" for p in packages), encoding="utf-8")


def is_question_suite(folder: Path) -> bool:
    return (folder / QUESTIONS).is_file()


def load_questions(folder: Path, suite: str) -> list[QuestionTask]:
    """The questions of a question suite; a TaskFormatError names the line and field."""
    packages_file = folder / PACKAGES
    packages = DATA_PACKAGES
    if packages_file.is_file():
        packages = requirements(read_task_file(packages_file))
        if not packages:
            raise TaskFormatError(f"{packages_file}: no requirement in it; remove the file")
    tasks: list[QuestionTask] = []
    for where, record in read_jsonl(folder / QUESTIONS):
        tasks.append(_question(folder, suite, where, record, packages))
    if not tasks:
        raise TaskFormatError(f"{folder / QUESTIONS}: no questions in this file")
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise TaskFormatError(f"{folder / QUESTIONS}: a question id is used twice")
    return tasks


def _question(
    folder: Path, suite: str, where: str, record: dict[str, Any], packages: tuple[str, ...]
) -> QuestionTask:
    task_id, question, files = record.get("id"), record.get("question"), record.get("files", [])
    if not isinstance(task_id, str) or not task_id or "/" in task_id:
        raise TaskFormatError(f"{where}: field 'id' is missing or not a plain name")
    if not isinstance(question, str) or not question.strip():
        raise TaskFormatError(f"{where}: field 'question' is missing")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise TaskFormatError(f"{where}: field 'files' must be a list of file names in {DATA}/")
    paths = []
    for name in files:
        path = folder / DATA / name
        if Path(name).name != name or not path.is_file():
            raise TaskFormatError(f"{where}: field 'files': no file {name!r} in {folder / DATA}")
        paths.append(path)
    answer = Answer.parse(record["answer"], where) if "answer" in record else None
    reference = record.get("reference")
    return QuestionTask(
        id=task_id,
        suite=suite,
        question=question.strip(),
        files=tuple(paths),
        answer=answer,
        packages=packages,
        reference=reference if isinstance(reference, str) else None,
    )
