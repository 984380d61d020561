"""The run store knows its schema, and every unreadable run says what to do."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from codetrial.config import RunConfig
from codetrial.errors import StoreError
from codetrial.records import AttemptRecord, Candidate, Outcome, Verdict
from codetrial.sandbox.launch import find_bwrap
from codetrial.store import SCHEMA_VERSION, RunStore, new_manifest
from codetrial.tasks import Task
from tests.conftest import CLI_ENV, CODETRIAL, without_modes


@pytest.fixture
def run_dir(tmp_path: Path, contracts10: dict[str, Task]) -> Path:
    """A closed run store holding one passed attempt."""
    task = contracts10["palindrome"]
    manifest = new_manifest(
        "r", RunConfig(), [task], backends={}, prompts={}, system_prompt="", isolation="bwrap"
    )
    store = RunStore.create(tmp_path / "run", manifest)
    verdict = Verdict(Outcome.PASSED, gate=None)
    record = AttemptRecord.judged(
        verdict, Candidate("x", "x"), model="embedded", task_id=task.id, sample=0
    )
    store.save_many([(task, record)], artifacts=False)
    store.close()
    return store.run_dir


def _edit_manifest(run_dir: Path, **fields: object) -> None:
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text()) | fields
    path.write_text(json.dumps({k: v for k, v in manifest.items() if v is not None}))


def _sql(run_dir: Path, statements: str) -> None:
    with sqlite3.connect(run_dir / "trial.sqlite") as db:
        db.executescript(statements)


def _open_error(run_dir: Path) -> str:
    with pytest.raises(StoreError) as caught:
        RunStore.open(run_dir).attempts()
    return " ".join(str(caught.value).split())


def test_a_new_run_carries_the_schema_number_in_both_files(run_dir: Path) -> None:
    assert json.loads((run_dir / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION
    with sqlite3.connect(run_dir / "trial.sqlite") as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    store = RunStore.open(run_dir)
    assert [r.task_id for r in store.attempts()] == ["palindrome"]
    store.close()


def test_a_run_written_before_schema_numbers_counts_as_schema_1(run_dir: Path) -> None:
    _edit_manifest(run_dir, schema_version=None)
    without_modes(run_dir / "trial.sqlite")
    _sql(run_dir, "PRAGMA user_version = 0")
    store = RunStore.open(run_dir)
    assert store.manifest.schema_version == 1
    assert len(store.attempts()) == 1
    store.mark_resumed()
    store.close()
    assert json.loads((run_dir / "manifest.json").read_text())["schema_version"] == 1


def test_a_schema_1_run_reads_as_this_schema_and_is_written_as_it_once_resumed(
    tmp_path: Path,
) -> None:
    """Schema 1 kept a repository task's patch as its attempt's code, and its table had
    no mode."""
    stored = Path(__file__).parent / "fixtures" / "before" / "repository" / "stored" / "evaluate"
    run_dir = tmp_path / "evaluate"
    shutil.copytree(stored, run_dir)
    with sqlite3.connect(run_dir / "trial.sqlite") as db:
        raw = [json.loads(r) for (r,) in db.execute("SELECT record FROM attempts")]
    assert all(r["code"] == r["raw_response"] and "patch" not in r for r in raw)
    store = RunStore.open(run_dir)
    assert store.manifest.schema_version == 1
    read = store.attempts()
    assert [(r.patch, r.code) for r in read] == [(r["code"], None) for r in raw]
    first = read[0]
    store.save_many([(None, first.model_copy(update={"attempt": 1}))], artifacts=False)  # type: ignore[list-item]
    store.close()
    assert json.loads((run_dir / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION
    with sqlite3.connect(run_dir / "trial.sqlite") as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert db.execute("SELECT DISTINCT mode FROM attempts").fetchall() == [("",)]
    again = RunStore.open(run_dir)
    assert [(r.patch, r.code) for r in again.attempts() if r.attempt == 0] == [
        (r.patch, r.code) for r in read
    ]
    again.close()


def test_a_manifest_of_another_schema_says_which_and_what_to_do(run_dir: Path) -> None:
    _edit_manifest(run_dir, schema_version=SCHEMA_VERSION + 1, codetrial_version="9.9.9")
    message = _open_error(run_dir)
    assert f"{run_dir / 'manifest.json'} was written by codetrial store schema 4" in message
    assert "reads store schemas 1, 2, 3" in message
    assert "re-run the trial with this version" in message
    assert "(9.9.9, recorded in its manifest)" in message


def test_a_database_of_another_schema_says_which_and_what_to_do(run_dir: Path) -> None:
    _sql(run_dir, f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    message = _open_error(run_dir)
    assert f"{run_dir / 'trial.sqlite'} was written by codetrial store schema 4" in message
    assert "re-run the trial with this version" in message


def test_an_unnumbered_database_of_an_older_layout_is_refused(run_dir: Path) -> None:
    """The first stores had no `sample` column; numbering came later."""
    _sql(
        run_dir,
        """
        PRAGMA user_version = 0;
        DROP TABLE attempts;
        CREATE TABLE attempts (model TEXT NOT NULL, task_id TEXT NOT NULL,
            attempt INTEGER NOT NULL, outcome TEXT NOT NULL, record TEXT NOT NULL,
            saved_at TEXT NOT NULL, PRIMARY KEY (model, task_id, attempt));
    """,
    )
    message = _open_error(run_dir)
    assert str(run_dir / "trial.sqlite") in message
    assert "attempts columns (model, task_id, attempt, outcome, record, saved_at)" in message
    assert "written before stores were numbered counts as schema 1 only if its layout" in message
    assert "re-run the trial with this version" in message


def test_a_record_that_no_longer_validates_is_named(run_dir: Path) -> None:
    _sql(run_dir, "UPDATE attempts SET record = json_set(record, '$.outcome', 'vanished')")
    message = _open_error(run_dir)
    assert f"{run_dir / 'trial.sqlite'} holds an attempt that does not validate" in message
    assert "model embedded, task palindrome, sample 0, attempt 0: outcome:" in message
    assert "re-run the trial with this version" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2]", "is not a run manifest (Input should be a valid dictionary"),
        ('{"run_id": "r"}', "is not a run manifest (created_at: Field required)"),
        ("{not json", "is not JSON"),
    ],
)
def test_a_manifest_that_is_not_one(run_dir: Path, text: str, expected: str) -> None:
    (run_dir / "manifest.json").write_text(text)
    message = _open_error(run_dir)
    assert f"{run_dir / 'manifest.json'} {expected}" in message
    assert "pass the folder that `codetrial run` printed, or re-run the trial" in message


def test_a_directory_in_place_of_the_manifest(run_dir: Path) -> None:
    (run_dir / "manifest.json").unlink()
    (run_dir / "manifest.json").mkdir()
    message = _open_error(run_dir)
    assert f"{run_dir / 'manifest.json'} cannot be read (Is a directory)" in message


def test_a_missing_database(run_dir: Path) -> None:
    (run_dir / "trial.sqlite").unlink()
    message = _open_error(run_dir)
    assert f"{run_dir / 'trial.sqlite'} is missing" in message
    assert "restore it from a copy of the run directory, or re-run the trial" in message


@pytest.mark.parametrize("replace", ["garbage", "directory"])
def test_a_database_that_cannot_be_opened(run_dir: Path, replace: str) -> None:
    database = run_dir / "trial.sqlite"
    database.unlink()
    if replace == "directory":
        database.mkdir()
    else:
        database.write_bytes(b"not a database, " * 100)
    message = _open_error(run_dir)
    assert f"{database} cannot be opened as a run database" in message
    assert "fix its permissions" in message


def test_a_folder_that_is_no_run(tmp_path: Path) -> None:
    message = _open_error(tmp_path)
    assert f"{tmp_path} is not a codetrial run directory (no manifest.json)" in message


# -- file permissions ----------------------------------------------------------------


def _without_capabilities() -> list[str]:
    """A command prefix under which file permissions hold even for root: a user
    namespace of its own, where no capability reaches the machine's files."""
    return [
        str(find_bwrap().path),
        "--unshare-user",
        "--uid",
        "1000",
        "--gid",
        "1000",
        "--dev-bind",
        "/",
        "/",
    ]


@pytest.mark.parametrize(
    ("locked", "expected"),
    [
        ("manifest.json", "cannot be read (Permission denied)"),
        ("trial.sqlite", "cannot be opened as a run database (unable to open database file)"),
    ],
)
def test_an_unreadable_file_is_a_store_error_not_a_traceback(
    run_dir: Path, locked: str, expected: str
) -> None:
    (run_dir / locked).chmod(0o000)
    run = run_dir
    result = subprocess.run(
        [*_without_capabilities(), CODETRIAL, "report", str(run)],
        capture_output=True,
        text=True,
        env=CLI_ENV,
        timeout=60,
    )
    message = " ".join(result.stderr.split())
    assert result.returncode == StoreError.exit_code, result.stdout + result.stderr
    assert f"{run / locked} {expected}" in message
    assert "fix its permissions" in message and "run as the user who wrote it" in message
    assert "Traceback" not in result.stdout + result.stderr
