"""Load tasks from folders: built-in suites ship in the same format a user writes.

A task folder holds `spec.md` (with one ```python block giving the signature),
`test_*.py` (visible tests), optionally `hidden/test_*.py` and `reference.py`.
A suite is a folder of task folders.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from codetrial.errors import TaskFormatError
from codetrial.records import Visibility
from codetrial.tasks.model import Signature, Task, TestFile

_FENCE = re.compile(r"```python\n(.*?)```", re.DOTALL)
_TITLE = re.compile(r"^#\s+(.+)$", re.MULTILINE)


def _suites_root() -> Path:
    return Path(str(resources.files("codetrial.tasks") / "suites"))


def known_suites() -> list[str]:
    return sorted(p.name for p in _suites_root().iterdir() if p.is_dir() and p.name[0] != "_")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskFormatError(f"{path}: not UTF-8 text ({exc.reason})") from exc


def _test_files(folder: Path, visibility: Visibility) -> list[TestFile]:
    return [
        TestFile(name=p.name, source=_read(p), visibility=visibility)
        for p in sorted(folder.glob("test_*.py"))
    ]


def load_folder(folder: Path, suite: str = "user") -> Task:
    """Load one task folder; a TaskFormatError names the file and what is wrong with it."""
    spec_path = folder / "spec.md"
    if not spec_path.is_file():
        raise TaskFormatError(f"{folder}: no spec.md (a task folder needs spec.md and test_*.py)")
    spec = _read(spec_path)
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
    tests = _test_files(folder, Visibility.VISIBLE) + _test_files(
        folder / "hidden", Visibility.HIDDEN
    )
    if not any(t.visibility is Visibility.VISIBLE for t in tests):
        raise TaskFormatError(f"{folder}: field 'tests': no visible test_*.py file")
    clash = {t.name for t in tests if t.visibility is Visibility.VISIBLE} & {
        t.name for t in tests if t.visibility is Visibility.HIDDEN
    }
    if clash:
        raise TaskFormatError(f"{folder}: a visible and a hidden test share the name {clash}")
    reference = folder / "reference.py"
    return Task(
        id=folder.name,
        suite=suite,
        title=title.group(1).strip() if title else folder.name,
        spec=spec,
        signature=signature,
        tests=tuple(tests),
        reference=_read(reference) if reference.is_file() else None,
    )


def load_suite(name: str, task_ids: list[str] | None = None) -> list[Task]:
    """A built-in suite by name, or a folder of task folders by path."""
    root = _suites_root() / name
    if not root.is_dir():
        root = Path(name)
        if not root.is_dir():
            raise TaskFormatError(
                f"unknown suite {name!r}: built-in suites are {', '.join(known_suites())}, "
                "or pass the path of a folder of task folders"
            )
    tasks = [
        load_folder(p, suite=root.name)
        for p in sorted(root.iterdir())
        if p.is_dir() and p.name[0] not in "._"
    ]
    if not tasks:
        raise TaskFormatError(f"{root}: no task folders in this suite")
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
