"""The aider polyglot benchmark: Exercism exercises in six languages, as workspace tasks.

A checkout holds `<language>/exercises/practice/<exercise>/`. Python's exercises load
as `load_exercise` has always loaded them; the other languages' are loaded here from
the same `.meta/config.json`: its `solution` files are the model's to edit (build
files aside: a `Cargo.toml` it lists is the build's, never the model's), its `test`
and `editor` files are the tests (never shown), its `example` files the reference,
and every other file of the exercise that its build needs (`go.mod`, `Cargo.toml`,
`CMakeLists.txt` with Catch2's header, `package.json` with `babel.config.js`) is
`support`, written beside the candidate's files and never shown. Gradle's files are
not kept: Java's tests are compiled and run without it.

The tests are read as aider's benchmark runs them: JavaScript's skipped tests
(`xtest`, and grep's `xit`) run, as do Java's disabled ones; Rust's ignored tests run
by the runner's own flag.
"""

from __future__ import annotations

import re
from pathlib import Path

from codetrial.errors import TaskFormatError
from codetrial.records import Visibility
from codetrial.tasks.files import read_task_file
from codetrial.tasks.model import TestFile
from codetrial.tasks.workspace import (
    WorkspaceTask,
    exercise_config,
    load_exercise,
    named,
    read_docs,
)

LANGUAGES = ("cpp", "go", "java", "javascript", "python", "rust")
# Files that build an exercise: never the model's, whatever its config lists.
BUILD_FILES = frozenset(
    {"CMakeLists.txt", "go.mod", "Cargo.toml", "package.json", "babel.config.js", "build.gradle"}
)
# What no run needs: Exercism's folders of prose and metadata, the Gradle wrapper, lint
# and registry settings.
_UNUSED = re.compile(
    r"^(\.docs|\.meta|\.approaches|\.articles|gradle)/|^(gradlew(\.bat)?|\.eslintrc|\.npmrc"
    r"|LICENSE|\.gitignore|HINTS\.md|README\.md)$"
)
# Tests aider's benchmark runs that Exercism's files mark to skip.
_SKIPPED = {
    "javascript": (re.compile(r"\bx(test|it)\("), r"\1("),
    "java": (re.compile(r"^\s*@Disabled\(.*\)\s*\n", re.MULTILINE), ""),
}
_REFERENCE = ".meta/src/reference/"
# Test files a language's runner finds by their names, which a config may not list.
_TEST_FILES = {"go": re.compile(r"_test\.go$")}


def _tests_as_run(language: str, source: str) -> str:
    if language not in _SKIPPED:
        return source
    pattern, replacement = _SKIPPED[language]
    return pattern.sub(replacement, source)


def _reference(folder: Path, editable: list[str], examples: list[str]) -> dict[str, str]:
    """Each example file under the path it takes in the workspace: Java's reference
    tree in place of its source tree; else the editable file of its extension."""
    placed: dict[str, str] = {}
    for example in examples:
        if example.startswith(_REFERENCE):
            path = "src/main/" + example.removeprefix(_REFERENCE)
        else:
            suffix = Path(example).suffix
            matching = [p for p in editable if Path(p).suffix == suffix]
            if len(matching) != 1:
                raise TaskFormatError(
                    f"{folder / example}: no one editable file of its kind to stand for"
                )
            path = matching[0]
        placed[path] = read_task_file(folder / example)
    return placed


def load_native_exercise(folder: Path, suite: str, language: str, task_id: str) -> WorkspaceTask:
    """One exercise in a language other than Python (see the module's docstring)."""
    config = exercise_config(folder)
    solution = named(folder, config, "solution")
    tests = named(folder, config, "test")
    extra = named(folder, config, "editor") if "editor" in config else []
    examples = named(folder, config, "example") if "example" in config else []
    editable = [path for path in solution if Path(path).name not in BUILD_FILES]
    listed = {*editable, *tests, *extra}
    support = sorted(
        relative
        for path in folder.rglob("*")
        if path.is_file()
        and (relative := path.relative_to(folder).as_posix()) not in listed
        and not _UNUSED.search(relative)
    )
    found = _TEST_FILES.get(language)
    extra += [path for path in support if found is not None and found.search(path)]
    support = [path for path in support if path not in extra]
    return WorkspaceTask(
        id=task_id,
        suite=suite,
        instructions=read_docs(folder),
        files=tuple((path, read_task_file(folder / path)) for path in editable),
        editable=tuple(editable),
        tests=tuple(
            TestFile(
                name, _tests_as_run(language, read_task_file(folder / name)), Visibility.VISIBLE
            )
            for name in [*tests, *extra]
        ),
        reference=tuple(_reference(folder, editable, examples).items()),
        language=language,
        support=tuple((path, read_task_file(folder / path)) for path in support),
    )


def language_folders(root: Path, language: str) -> list[Path]:
    """The exercise folders of `language` in a checkout of the benchmark at `root`,
    or at `root` itself when it is that language's folder of exercises."""
    for folder in (root / language / "exercises" / "practice", root):
        found = sorted(folder.glob("*/.meta/config.json")) if folder.is_dir() else []
        if found:
            return [config.parent.parent for config in found]
    return []


def load_polyglot(root: Path, languages: tuple[str, ...], suite: str) -> list[WorkspaceTask]:
    """The exercises of `languages` under `root`, named `<language>/<exercise>` when
    the suite holds more than one language (else by the exercise's name, as
    `polyglot-python` always named them)."""
    tasks: list[WorkspaceTask] = []
    for language in languages:
        folders = language_folders(root, language)
        if not folders:
            raise TaskFormatError(
                f"{root}: no {language} exercises here; pass a checkout of the aider polyglot "
                f"benchmark (with {language}/exercises/practice/) or that folder itself"
            )
        for folder in folders:
            task_id = folder.name if len(languages) == 1 else f"{language}/{folder.name}"
            if language == "python":
                tasks.append(load_exercise(folder, suite, task_id))
            else:
                tasks.append(load_native_exercise(folder, suite, language, task_id))
    return tasks
