from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.errors import BackendRefused
from codetrial.gate import get_profile
from codetrial.records import Candidate, Verdict
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks import Task, load_folder, load_suite
from codetrial.verdict import judge

FIXTURES = Path(__file__).parent / "fixtures"
# Task folders there hold test files that import a candidate: data, not tests to run.
collect_ignore_glob = ["fixtures/*"]
POLYGLOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "polyglot-python"
CODETRIAL = str(Path(sys.executable).with_name("codetrial"))
FAST_LIMITS = Limits(timeout_s=5, cpu_s=3)
# What `make test` downloads for repository tasks: the sdists their fixtures are built
# from and the wheels of their package environments; the tests never go online.
SWE_DOWNLOADS = Path(sys.executable).parents[1] / "swe"
SWE_WHEELS = SWE_DOWNLOADS / "wheels"
# ... and the wheels of numpy, pandas and matplotlib, for library tasks and questions.
DATA_WHEELS = Path(sys.executable).parents[1] / "data-wheels"
CLI_ENV = {**os.environ, "COLUMNS": "200"}


def cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] = CLI_ENV,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`codetrial ARGS` run as a user runs it, its output captured."""
    return subprocess.run(
        [CODETRIAL, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, each worker and what it starts keep to a CPU of their own:
    the embedded model then runs one thread per worker, and two workers' models never
    contend for one core (llama.cpp's threads wait on each other at every step)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is not None:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[int(worker.removeprefix("gw")) % len(cpus)]})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that take minutes start first, so that no worker is left with one
    at the end while the others are idle."""
    items.sort(key=lambda item: item.get_closest_marker("minutes") is None)


def refused_and_saved(
    result: subprocess.CompletedProcess[str], runs: Path, refused: str
) -> tuple[Path, str]:
    """The run directory and the flattened stderr of a run that a backend refused:
    exit 8, the refusal named, finished work saved with how to resume, no traceback."""
    output = result.stdout + result.stderr
    assert result.returncode == BackendRefused.exit_code, output
    (run_dir,) = runs.iterdir()
    stderr = " ".join(result.stderr.split())
    assert refused in stderr
    assert f"finished work is saved; continue with: codetrial run --resume {run_dir}" in stderr
    assert "Traceback" not in output
    return run_dir, stderr


def git_commit(clone: Path, files: dict[str, str]) -> str:
    """Write `files` into the git repository `clone` (made when missing), commit them,
    and return the commit's hash."""
    clone.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    if not (clone / ".git").exists():
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "commit"], check=True)
    done = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def fenced(code: str) -> str:
    return f"Here is the implementation.\n\n```python\n{code.rstrip()}\n```\n"


def write_task(folder: Path, signature: str, visible: str, hidden: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "spec.md").write_text(f"# {folder.name}\n\nDo it.\n\n```python\n{signature}\n```\n")
    (folder / "test_visible.py").write_text(visible)
    if hidden:
        (folder / "hidden").mkdir()
        (folder / "hidden" / "test_hidden.py").write_text(hidden)
    return folder


@pytest.fixture(scope="session")
def contracts10() -> dict[str, Task]:
    return {t.id: t for t in load_suite("contracts10")}


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    sandbox = open_sandbox(SandboxPolicy(FAST_LIMITS))
    yield sandbox
    sandbox.close()


@pytest.fixture
def add_task(tmp_path: Path) -> Task:
    """A one-function task: visible and hidden tests, used to probe outcomes."""
    folder = write_task(
        tmp_path / "add",
        "def add(a: int, b: int) -> int:",
        "from candidate import add\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n",
        "from candidate import add\n\n\ndef test_negatives():\n    assert add(-1, -2) == -3\n",
    )
    return load_folder(folder)


@pytest.fixture
def judge_code(sandbox: Sandbox):  # type: ignore[no-untyped-def]
    def run(code: str, task: Task, profile: str = "builtins-only") -> Verdict:
        return judge(Candidate(code, code), task, get_profile(profile), sandbox, FAST_LIMITS)

    return run


def without_modes(db: Path) -> None:
    """The run database `db` in the layout of store schemas 1 and 2, whose attempts
    table had no `mode` column, holding the same rows."""
    with sqlite3.connect(db) as conn:
        conn.executescript(
            """
            ALTER TABLE attempts RENAME TO later;
            CREATE TABLE attempts (model TEXT NOT NULL, task_id TEXT NOT NULL,
                sample INTEGER NOT NULL, attempt INTEGER NOT NULL, outcome TEXT NOT NULL,
                record TEXT NOT NULL, saved_at TEXT NOT NULL,
                PRIMARY KEY (model, task_id, sample, attempt));
            INSERT INTO attempts
                SELECT model, task_id, sample, attempt, outcome, record, saved_at FROM later;
            DROP TABLE later;
            """
        )
