"""Workspace tasks: a folder of files the model edits, judged by the task's own tests.

A workspace task gives the model instructions and the files it may edit (an
exercise's stub, say); its test files are never shown to the model, only their output
on failure. The tests construct the candidate's objects and pass callbacks into them;
they run in a sandbox of their own and reach those objects through requests to the
candidate's (see `codetrial.verdict.workspace`).

`load_exercism` reads Exercism's layout directly, as the aider polyglot benchmark
ships it: per exercise, `.docs/` (introduction, instructions, instructions.append),
`.meta/config.json` (`files.solution`, `files.test`, `files.example`) and the files
it names. Test files are checked when the task loads: one that does not parse is the
task's fault, named before any model is asked.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from codetrial.errors import TaskFormatError
from codetrial.records import Visibility
from codetrial.tasks.files import parsed, read_task_file
from codetrial.tasks.model import TestFile, tests_digest

_DOCS = ("introduction.md", "instructions.md", "instructions.append.md")

_LAYOUTS = (".", "exercises", "exercises/practice", "python/exercises/practice")


@dataclass(frozen=True)
class WorkspaceTask:
    """`files` are the workspace as the model first sees it (path -> text), `editable`
    the paths it may change, `tests` its test files (never shown), `reference` the
    editable files as a reference solution has them. `policy` is the gate profile."""

    id: str
    suite: str
    instructions: str
    files: tuple[tuple[str, str], ...]
    editable: tuple[str, ...]
    tests: tuple[TestFile, ...]
    reference: tuple[tuple[str, str], ...] = ()
    policy: str = "off"
    language: str = "python"
    support: tuple[tuple[str, str], ...] = ()
    kind: ClassVar[str] = "workspace"

    @property
    def trust(self) -> str:
        """ "trusted-side": the tests run in a process of their own and reach the
        candidate's modules only through requests (see `codetrial.sandbox.remote`).
        "in-sandbox" when they read the frames of the code that calls them (they
        import `inspect`), and for every language but Python, whose test runner
        runs in the process it tests: those run beside the candidate's files."""
        if self.language != "python":
            return "in-sandbox"
        return "in-sandbox" if _reads_frames(self.tests) else "trusted-side"

    @property
    def digest(self) -> str:
        """Changes whenever the instructions, the files shown, any test or (for a
        language other than Python) the language or a file its build uses changes."""
        shown = [self.instructions, self.files, self.editable]
        if self.language != "python":
            shown += [self.language, self.support]
        return tests_digest(hashlib.sha256(json.dumps(shown).encode()), self.tests)

    @property
    def test_sources(self) -> dict[str, str]:
        return {test.name: test.source for test in self.tests}


@functools.cache
def _reads_frames(tests: tuple[TestFile, ...]) -> bool:
    for test in tests:
        for node in ast.walk(parsed(test.source, test.name)):
            if isinstance(node, ast.Import) and any(a.name == "inspect" for a in node.names):
                return True
            if isinstance(node, ast.ImportFrom) and node.module == "inspect":
                return True
            if isinstance(node, ast.Attribute) and node.attr == "_getframe":
                return True
    return False


def exercise_config(folder: Path) -> dict[str, object]:
    """The `files` of an exercise's `.meta/config.json`: which files are its
    solution, tests and example."""
    config_path = folder / ".meta" / "config.json"
    try:
        files = json.loads(read_task_file(config_path)).get("files")
    except (ValueError, AttributeError) as exc:
        raise TaskFormatError(f"{config_path}: not a JSON object with 'files' ({exc})") from exc
    if not isinstance(files, dict):
        raise TaskFormatError(f"{config_path}: field 'files' is missing")
    return files


def read_docs(folder: Path) -> str:
    """An exercise's instructions: its introduction, instructions and their appendix."""
    docs = [
        read_task_file(folder / ".docs" / name)
        for name in _DOCS
        if (folder / ".docs" / name).is_file()
    ]
    if not docs:
        raise TaskFormatError(f"{folder / '.docs'}: no instructions.md")
    return "\n\n".join(doc.strip() for doc in docs) + "\n"


def named(folder: Path, config: dict[str, object], key: str) -> list[str]:
    """The file names `config` lists under `key`; a TaskFormatError when it lists none."""
    names = config.get(key)
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise TaskFormatError(
            f"{folder / '.meta' / 'config.json'}: field 'files.{key}' must list file names"
        )
    return [str(name) for name in names]


def _no_inherited_cases(tree: ast.Module, modules: set[str], path: Path) -> None:
    """Refuse a class that derives from a class of another test file: which tests it
    holds cannot be read from this file's syntax, as the trusted side counts them."""
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module in modules
        for alias in node.names
    } | {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name in modules
    }
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                root = base.value if isinstance(base, ast.Attribute) else base
                if isinstance(root, ast.Name) and root.id in imported:
                    raise TaskFormatError(
                        f"{path}, line {node.lineno}: class {node.name} derives from "
                        f"{ast.unparse(base)} of another test file; define its tests in this file "
                        "(a TestCase's tests are counted from its own file)"
                    )


def load_exercise(folder: Path, suite: str, task_id: str | None = None) -> WorkspaceTask:
    """One Exercism exercise in Python, named `task_id` (by default its folder's
    name); a TaskFormatError names the file and what is wrong. The other languages'
    are loaded by `codetrial.tasks.polyglot`."""
    files = exercise_config(folder)
    solution, tests = named(folder, files, "solution"), named(folder, files, "test")
    examples = named(folder, files, "example") if "example" in files else []
    test_files = []
    modules = {name.removesuffix(".py").replace("/", ".") for name in tests}
    for name in tests:
        source = read_task_file(folder / name)
        _no_inherited_cases(parsed(source, str(folder / name)), modules, folder / name)
        test_files.append(TestFile(name, source, Visibility.VISIBLE))
    reference: tuple[tuple[str, str], ...] = ()
    if len(examples) == len(solution):
        reference = tuple(
            (path, read_task_file(folder / example))
            for path, example in zip(solution, examples, strict=True)
        )
    return WorkspaceTask(
        id=task_id or folder.name,
        suite=suite,
        instructions=read_docs(folder),
        files=tuple((path, read_task_file(folder / path)) for path in solution),
        editable=tuple(solution),
        tests=tuple(test_files),
        reference=reference,
    )


def exercise_folders(root: Path) -> list[Path]:
    """The exercise folders under `root`: a folder of exercise folders, or a checkout
    whose exercises are under `exercises/`, `exercises/practice/` or
    `python/exercises/practice/`; none when it holds no exercise."""
    for layout in _LAYOUTS:
        folder = root / layout
        found = sorted(folder.glob("*/.meta/config.json")) if folder.is_dir() else []
        if found:
            return [config.parent.parent for config in found]
    return []


def load_exercism(root: Path, suite: str) -> list[WorkspaceTask]:
    """Every exercise under `root` (see exercise_folders)."""
    folders = exercise_folders(root)
    if folders:
        return [load_exercise(folder, suite) for folder in folders]
    raise TaskFormatError(
        f"{root}: no Exercism exercises here (folders with .meta/config.json); pass the "
        "folder that holds them, e.g. a polyglot benchmark checkout's python/exercises/practice"
    )
