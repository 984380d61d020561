"""Load tasks from folders: built-in suites ship in the same format a user writes.

A function task's folder holds `spec.md` (with one ```python block giving the
signature), `test_*.py` (visible tests), optionally `hidden/test_*.py`,
`reference.py`, `heavy_input.txt` (see `Task.heavy_input`) and `packages.txt`
(the libraries it may import, one pip requirement a line, see `Task.packages`). A workspace task's
folder is an Exercism exercise (see `codetrial.tasks.workspace`), a program task's a
contest problem (see `codetrial.tasks.programs`). A suite is a folder of task folders
of one kind.
"""

from __future__ import annotations

import ast
import functools
import re
import tempfile
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path

from codetrial.errors import TaskFormatError
from codetrial.records import Visibility
from codetrial.registry import Registry
from codetrial.tasks.benchmarks import (
    EXPECTED_FILES,
    is_prompt_record,
    load_benchmark_file,
    load_humaneval,
)
from codetrial.tasks.contests import (
    load_apps,
    load_apps_calls,
    load_codecontests,
    load_livecodebench,
)
from codetrial.tasks.files import parsed, read_task_file
from codetrial.tasks.jsonl import first_record, read_jsonl
from codetrial.tasks.model import HEAVY_INPUT, PACKAGES, Signature, Task, TestFile
from codetrial.tasks.polyglot import LANGUAGES, load_polyglot
from codetrial.tasks.prediction import (
    SCENARIOS,
    PredictionTask,
    from_programs,
    load_livecodebench_execution,
    load_livecodebench_output,
)
from codetrial.tasks.programs import ProgramTask, is_program_suite, load_programs
from codetrial.tasks.questions import (
    QuestionTask,
    is_question_suite,
    load_questions,
    requirements,
)
from codetrial.tasks.repository import RepositoryTask, is_swe_record, load_swe
from codetrial.tasks.workspace import WorkspaceTask, exercise_folders, load_exercism

AnyTask = Task | WorkspaceTask | RepositoryTask | QuestionTask | ProgramTask | PredictionTask

_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)
_TITLE = re.compile(r"^#\s+(.+)$", re.MULTILINE)


def _suites_root() -> Path:
    return Path(str(resources.files("codetrial.tasks") / "suites"))


def known_suites() -> list[str]:
    return sorted(p.name for p in _suites_root().iterdir() if p.is_dir() and p.name[0] != "_")


def _imports(tree: ast.Module, entry_point: str) -> bool:
    """Whether the module imports the candidate's entry point (or the whole module)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "candidate"
            and any(alias.name in (entry_point, "*") for alias in node.names)
        ):
            return True
        if isinstance(node, ast.Import) and any(a.name == "candidate" for a in node.names):
            return True
    return False


def _test_files(folder: Path, visibility: Visibility, entry_point: str) -> list[TestFile]:
    """The folder's test files; one that does not parse, or never imports the entry
    point, is the task's fault and is named before any model is asked."""
    files = []
    for path in sorted(folder.glob("test_*.py")):
        source = read_task_file(path)
        if not _imports(parsed(source, str(path)), entry_point):
            raise TaskFormatError(
                f"{path}: never imports the function under test; add "
                f"`from candidate import {entry_point}`"
            )
        files.append(TestFile(name=path.name, source=source, visibility=visibility))
    return files


def load_folder(folder: Path, suite: str = "user") -> Task:
    """Load one task folder; a TaskFormatError names the file and what is wrong with it."""
    spec_path = folder / "spec.md"
    if not spec_path.is_file():
        raise TaskFormatError(f"{folder}: no spec.md (a task folder needs spec.md and test_*.py)")
    spec = read_task_file(spec_path)
    blocks = _FENCE.findall(spec)
    if len(blocks) != 1:
        raise TaskFormatError(
            f"{spec_path}: field 'signature': expected exactly one ```python block holding "
            f"the function signature, found {len(blocks)}"
        )
    try:
        signature = Signature.parse(blocks[0])
    except (SyntaxError, ValueError) as exc:
        raise TaskFormatError(f"{spec_path}: field 'signature': {exc}") from exc
    title = _TITLE.search(spec)
    tests = _test_files(folder, Visibility.VISIBLE, signature.entry_point) + _test_files(
        folder / "hidden", Visibility.HIDDEN, signature.entry_point
    )
    if not any(t.visibility is Visibility.VISIBLE for t in tests):
        raise TaskFormatError(f"{folder}: field 'tests': no visible test_*.py file")
    clash = {t.name for t in tests if t.visibility is Visibility.VISIBLE} & {
        t.name for t in tests if t.visibility is Visibility.HIDDEN
    }
    if clash:
        raise TaskFormatError(f"{folder}: a visible and a hidden test share the name {clash}")
    reference = folder / "reference.py"
    heavy = folder / HEAVY_INPUT
    packages = folder / PACKAGES
    return Task(
        id=folder.name,
        suite=suite,
        title=title.group(1).strip() if title else folder.name,
        spec=spec,
        signature=signature,
        tests=tuple(tests),
        reference=read_task_file(reference) if reference.is_file() else None,
        heavy_input=read_task_file(heavy).strip() if heavy.is_file() else "",
        packages=_requirements(packages) if packages.is_file() else (),
    )


def _requirements(path: Path) -> tuple[str, ...]:
    found = requirements(read_task_file(path))
    if not found:
        raise TaskFormatError(f"{path}: field 'packages': no requirement in it; remove the file")
    return found


def _load_folder_suite(root: Path) -> list[AnyTask]:
    if is_question_suite(root):
        return list(load_questions(root, root.name))
    if exercise_folders(root):
        return list(load_exercism(root, root.name))
    if is_program_suite(root):
        return list(load_programs(root, root.name))
    tasks: list[AnyTask] = [
        load_folder(p, suite=root.name)
        for p in sorted(root.iterdir())
        if p.is_dir() and p.name[0] not in "._"
    ]
    if not tasks:
        raise TaskFormatError(f"{root}: no task folders in this suite")
    return tasks


def _load_jsonl_suite(path: Path) -> list[Task]:
    """One task a line: {"id", "spec", "tests": {name: source}, "hidden": {...},
    "reference", "heavy_input", "packages"}, the same parts as a task folder
    ("packages" as the text of a packages.txt)."""
    tasks = []
    for where, record in read_jsonl(path):
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / str(record.get("id", ""))
            try:
                _write_task_folder(folder, record)
            except (TypeError, ValueError, AttributeError, OSError) as exc:
                raise TaskFormatError(f"{where}: {exc}") from exc
            try:
                tasks.append(load_folder(folder, suite=path.stem))
            except TaskFormatError as exc:
                raise TaskFormatError(f"{where}: {str(exc).replace(str(folder), 'task')}") from exc
    if not tasks:
        raise TaskFormatError(f"{path}: no tasks in this file")
    return tasks


def _write_task_folder(folder: Path, record: dict[str, object]) -> None:
    if not isinstance(record, dict) or not record.get("id") or "/" in str(record["id"]):
        raise ValueError("field 'id' is missing or not a plain name")
    folder.mkdir(parents=True)
    (folder / "spec.md").write_text(str(record.get("spec") or ""), encoding="utf-8")
    for key, target in (("tests", folder), ("hidden", folder / "hidden")):
        files = record.get(key) or {}
        if not isinstance(files, dict):
            raise ValueError(f"field {key!r} must map file names to sources")
        target.mkdir(exist_ok=True)
        for name, source in files.items():
            if not str(name).startswith("test_") or "/" in str(name):
                raise ValueError(f"field {key!r}: {name!r} is not a test_*.py name")
            (target / str(name)).write_text(str(source), encoding="utf-8")
    for key, name in (
        ("reference", "reference.py"),
        ("heavy_input", HEAVY_INPUT),
        ("packages", PACKAGES),
    ):
        if isinstance(record.get(key), str):
            (folder / name).write_text(str(record[key]), encoding="utf-8")


def _load_polyglot(data: Path | None) -> list[WorkspaceTask]:
    if data is None:
        raise TaskFormatError(
            "suite 'polyglot-python' needs --data PATH pointing at the aider polyglot "
            "benchmark's Python exercises: a checkout of the benchmark, or its "
            "python/exercises/practice folder"
        )
    return load_exercism(data, "polyglot-python")


def _load_languages(
    suite: str, languages: tuple[str, ...], data: Path | None
) -> list[WorkspaceTask]:
    if data is None:
        raise TaskFormatError(
            f"suite {suite!r} needs --data PATH pointing at a checkout of the aider polyglot "
            "benchmark (its language folders: " + ", ".join(languages) + ")"
        )
    return load_polyglot(data, languages, suite)


def _load_swe(data: Path | None) -> list[RepositoryTask]:
    if data is None:
        raise TaskFormatError(
            "suite 'swe' needs --data PATH pointing at a SWE-bench JSONL of instances "
            "(with environments.toml beside it), and --repos DIR holding their clones"
        )
    return load_swe(data)


_APPS_FILES = "APPS's test.jsonl or train.jsonl, or a folder of its problem folders"
CONTEST_FILES: dict[str, tuple[Callable[[Path], Sequence[AnyTask]], str]] = {
    "livecodebench": (
        load_livecodebench,
        "a LiveCodeBench code-generation release file (test.jsonl, test2.jsonl, ...)",
    ),
    "apps": (load_apps, _APPS_FILES),
    "apps-calls": (load_apps_calls, _APPS_FILES),
    "codecontests": (load_codecontests, "a CodeContests JSONL file"),
    "livecodebench-output": (
        load_livecodebench_output,
        "LiveCodeBench's test-output prediction file (test.jsonl)",
    ),
    "livecodebench-execution": (
        load_livecodebench_execution,
        "LiveCodeBench's code execution file (test.jsonl)",
    ),
}


def _load_contests(suite: str, data: Path | None) -> Sequence[AnyTask]:
    load, expected = CONTEST_FILES[suite]
    if data is None or not data.exists():
        where = f" ({data} does not exist)" if data is not None else ""
        raise TaskFormatError(f"suite {suite!r} needs --data PATH pointing at {expected}{where}")
    return load(data)


def _load_predictions(scenario: str, data: Path | None) -> list[PredictionTask]:
    """The built-in programs suite's problems, asked as predictions in `scenario`."""
    return from_programs(load_programs(_suites_root() / "programs", "programs"), scenario)


Source = Callable[[Path | None], Sequence[AnyTask]]
SOURCES: Registry[Source] = Registry("suite")
SOURCES.register("humaneval", lambda data: load_humaneval())
for _suite in EXPECTED_FILES:
    SOURCES.register(_suite, functools.partial(load_benchmark_file, _suite))
SOURCES.register("polyglot-python", _load_polyglot)
SOURCES.register("polyglot", functools.partial(_load_languages, "polyglot", LANGUAGES))
for _language in LANGUAGES:
    if _language != "python":
        _named_suite = f"polyglot-{_language}"
        SOURCES.register(
            _named_suite, functools.partial(_load_languages, _named_suite, (_language,))
        )
SOURCES.register("swe", _load_swe)
for _suite in CONTEST_FILES:
    SOURCES.register(_suite, functools.partial(_load_contests, _suite))
for _scenario in SCENARIOS:
    SOURCES.register(f"programs-{_scenario}", functools.partial(_load_predictions, _scenario))


def _load_source(name: str, data: Path | None) -> list[AnyTask]:
    """A registered source, a built-in folder suite, or a path."""
    if name in SOURCES:
        return list(SOURCES.get(name)(data))
    builtin = _suites_root() / name
    if builtin.is_dir():
        return _load_folder_suite(builtin)
    path = Path(name)
    if path.is_dir():
        return _load_folder_suite(path)
    if path.is_file() and path.suffix == ".jsonl":
        first = first_record(path) or {}
        if is_swe_record(first):
            return list(load_swe(path, path.stem))
        if is_prompt_record(first):
            return list(load_benchmark_file(path.stem, path))
        return list(_load_jsonl_suite(path))
    raise TaskFormatError(
        f"{SOURCES.unknown(name, [*known_suites(), *SOURCES.names()])}; "
        "or pass the path of a folder of task folders or of a JSONL of tasks"
    )


def load_suite(
    name: str, task_ids: list[str] | None = None, data: Path | None = None
) -> list[AnyTask]:
    """A suite by name (built-in, humaneval, programs-output/programs-execution,
    humaneval+/mbpp/mbpp+, polyglot or one of its languages: polyglot-python,
    polyglot-go..., livecodebench/apps/apps-calls/codecontests/livecodebench-output/
    livecodebench-execution with --data) or path, or only `task_ids` of it."""
    tasks = _load_source(name, data)
    if task_ids:
        by_id = {t.id: t for t in tasks}
        unknown = [t for t in task_ids if t not in by_id]
        if unknown:
            raise TaskFormatError(
                f"unknown task {', '.join(unknown)} in suite {name!r}; "
                f"known: {', '.join(sorted(by_id))}"
            )
        tasks = [by_id[t] for t in task_ids]
    return tasks
