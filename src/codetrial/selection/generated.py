"""Tests a model wrote for a task, cut out of its continuations the way CodeT does:
split on `assert `, keep pieces that call the entry point, cut at the stop markers,
keep what compiles inside a `try:` block, and use the first few of each. They come
from a file (CodeT's format) or from a model asked for them; either way they are as
untrusted as the candidates and run only in the sandbox."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

from codetrial.errors import TaskFormatError
from codetrial.extract import extract
from codetrial.models import Backend
from codetrial.models.base import generate_samples
from codetrial.prompts import test_messages
from codetrial.records import GenerationOptions
from codetrial.syntax import compiled
from codetrial.tasks import Task
from codetrial.tasks.jsonl import read_jsonl

STOPS = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")
PER_CONTINUATION = 5
ASKED_TESTS = 10


def _cut(text: str) -> str:
    for marker in STOPS:
        text = text.split(marker)[0]
    return text.strip()


def _compiles(test: str) -> bool:
    block = "try:\n    " + test.replace("\n", "\n    ") + "\nexcept:\n    pass\n"
    try:
        compiled(block, "<generated test>")
    except SyntaxError:
        return False
    return True


def runs_as_one(tests: Iterable[str]) -> bool:
    """Whether a task's tests compile together as the body of one test function, which
    is how CodeT runs them against each candidate. A test that compiles only at module
    level (say, `from m import *`) makes that program fail to compile for every
    candidate, so in CodeT the task's tests tell nothing and it picks at random."""
    lines = ["def check():", "    pass"]
    for test in tests:
        lines += ["    try:", *(f"        {line}" for line in test.strip().split("\n"))]
        lines += ["    except Exception:", "        pass"]
    try:
        compiled("\n".join(lines) + "\n", "<generated tests>")
    except SyntaxError:
        return False
    return True


def extract_tests(continuation: str, entry_point: str, limit: int = PER_CONTINUATION) -> list[str]:
    pieces = [
        f"assert {part}".strip()
        for part in f"assert {continuation}".split("assert ")
        if entry_point in part and part.strip()
    ]
    tests = [_cut(piece) for piece in pieces]
    return [t for t in tests if t and "assert" in t and _compiles(t)][:limit]


def load_generated_tests(
    path: Path, tasks: list[Task], prompts: dict[str, str]
) -> dict[str, list[str]]:
    """Task id -> every extracted test, duplicates kept (their count is their weight),
    for `tasks` only. A line is {"prompt", "samples"}; `prompts` maps its prompt to a
    task id, and a line of a task not among `tasks` is passed over."""
    by_id = {t.id: t for t in tasks}
    tests: dict[str, list[str]] = {}
    for where, record in read_jsonl(path):
        task_id = prompts.get(str(record.get("prompt")))
        if task_id is None or not isinstance(record.get("samples"), list):
            raise TaskFormatError(f"{where}: needs a known 'prompt' and a 'samples' list")
        task = by_id.get(task_id)
        if task is None:
            continue
        found = tests.setdefault(task.id, [])
        for continuation in record["samples"]:
            found.extend(extract_tests(str(continuation), task.entry_point))
    return tests


def write_tests(
    backend: Backend, task: Task, options: GenerationOptions, responses: int = 1
) -> tuple[list[str], int]:
    """Ask the model for tests `responses` times (seed + i), drawn together where the
    backend can; every extracted test, duplicates kept, and the completion tokens."""
    seeded = [dataclasses.replace(options, seed=options.seed + i) for i in range(responses)]
    tests: list[str] = []
    tokens = 0
    for generation in generate_samples(backend, test_messages(task, ASKED_TESTS), seeded):
        text = extract(generation.text, task.entry_point).code or generation.text
        tests.extend(extract_tests(text, task.entry_point, ASKED_TESTS))
        tokens += generation.completion_tokens or 0
    return tests, tokens
