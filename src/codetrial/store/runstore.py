"""The run store: a SQLite database, the manifest and the artifact tree of one run.

Every attempt is committed in one transaction after its artifacts are on disk, so
killing the process at any moment loses at most the attempt in flight; `--resume`
picks up from what the database holds. The database carries the store schema's number
in SQLite's `user_version`, as the manifest does in `schema_version`; 0, SQLite's
default, marks a database written before stores carried a number.

Schema 2 keeps a repository task's patch as its attempt's `patch`; schema 1 kept it as
its `code`. Schema 3 keeps the mode a question was answered in as its attempt's
`mode`, a column of the database and part of its key; schemas 1 and 2 folded it into
the model's name ("embedded (fix)"). A run of an older schema is read as schema 3,
and when it is resumed its database is rewritten in schema 3's layout, and it and the
manifest say schema 3, before its first new attempt is stored.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from codetrial.config import problem
from codetrial.errors import StoreError
from codetrial.records import AttemptRecord, TaskResult
from codetrial.store.artifacts import write_atomic, write_attempt
from codetrial.store.manifest import (
    READABLE,
    SCHEMA_VERSION,
    Manifest,
    now,
    read_manifest,
    unreadable_run,
)
from codetrial.tasks import AnyTask

DB_NAME = "trial.sqlite"
MANIFEST = "manifest.json"
_SCHEMA = """
CREATE TABLE attempts (
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    task_id TEXT NOT NULL,
    sample INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    PRIMARY KEY (model, mode, task_id, sample, attempt)
)
"""
_COLUMNS = ["model", "mode", "task_id", "sample", "attempt", "outcome", "record", "saved_at"]
_COLUMNS_BEFORE = [c for c in _COLUMNS if c != "mode"]  # schemas 1 and 2
_ROW = f"({', '.join('?' * len(_COLUMNS))})"


def new_run_id(runs_dir: Path, suite: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{Path(suite).name}"
    run_id, n = base, 1
    while (runs_dir / run_id).exists():
        n += 1
        run_id = f"{base}-{n}"
    return run_id


def _database(path: Path, manifest: Manifest, new: bool) -> sqlite3.Connection:
    """The run's database, crash-safe. A new one gets the table and this store schema's
    number; an existing one must be of a schema this store reads, or a StoreError says
    what to do."""
    try:
        db = sqlite3.connect(path)
    except sqlite3.DatabaseError as exc:
        raise _unopenable(path, exc) from exc
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        if new:
            db.execute(_SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        columns = [row[1] for row in db.execute("PRAGMA table_info(attempts)")]
    except sqlite3.DatabaseError as exc:
        db.close()
        raise _unopenable(path, exc) from exc
    found = None
    expected = _COLUMNS if version == SCHEMA_VERSION else _COLUMNS_BEFORE
    if version not in (0, *READABLE):  # 0: written before stores were numbered
        found = f"was written by codetrial store schema {version}"
    elif columns != expected:
        found = (
            f"has the attempts columns ({', '.join(columns) or 'no table'}), not those of "
            f"store schema {version or 1} ({', '.join(expected)}; a run written before "
            "stores were numbered counts as schema 1 only if its layout is schema 1's)"
        )
    if found is not None:
        db.close()
        raise unreadable_run(path, found, manifest.codetrial_version)
    return db


def _unopenable(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    return StoreError(
        f"{path} cannot be opened as a run database ({exc}): it must be a database file "
        "codetrial wrote, which this user may read and write; fix its permissions, run as "
        "the user who wrote it, or re-run the trial"
    )


def find_runs(paths: Iterable[Path]) -> list[Path]:
    """The run directories among `paths` and below them, each once, in path order; a
    run directory's own folders, and hidden ones (a copy on its way in), are not
    searched."""
    found: dict[Path, None] = {}
    pending = sorted(paths, reverse=True)
    while pending:
        path = pending.pop()
        if (path / MANIFEST).is_file():
            found[path] = None
        elif path.is_dir() and not path.is_symlink():
            inside = (p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
            pending.extend(sorted(inside, reverse=True))
    return list(found)


class RunStore:
    """One run's store, made by create() or open(); `db` is its open database. Use it
    as a context manager, or call `close()`."""

    def __init__(self, run_dir: Path, manifest: Manifest, db: sqlite3.Connection) -> None:
        self.run_dir = run_dir
        self.manifest = manifest
        self._db = db

    @classmethod
    def create(cls, run_dir: Path, manifest: Manifest) -> RunStore:
        """A new run directory, whole or not at all: its manifest and empty database are
        made in a hidden folder beside it, which then takes its name, so a run killed
        while it was being made leaves nothing that looks like a run to resume."""
        if run_dir.exists():
            raise FileExistsError(f"{run_dir} exists")
        partial = run_dir.with_name(f".{run_dir.name}.partial")
        shutil.rmtree(partial, ignore_errors=True)  # one killed while it was being made
        partial.mkdir(parents=True)
        write_atomic(partial / MANIFEST, manifest.model_dump_json(indent=2))
        _database(partial / DB_NAME, manifest, new=True).close()
        partial.rename(run_dir)
        return cls(run_dir, manifest, _database(run_dir / DB_NAME, manifest, new=False))

    @classmethod
    def open(cls, run_dir: Path) -> RunStore:
        """A run written before; a StoreError names the file and what to do when it is
        not a run directory, cannot be read or was written by another store schema."""
        if not (run_dir / MANIFEST).exists():
            raise StoreError(
                f"{run_dir} is not a codetrial run directory (no {MANIFEST}); "
                "pass the folder that `codetrial run` printed"
            )
        manifest = read_manifest(run_dir / MANIFEST)
        database = run_dir / DB_NAME
        if not database.exists():
            raise StoreError(
                f"{database} is missing, and with it every stored attempt of the run: "
                "restore it from a copy of the run directory, or re-run the trial"
            )
        return cls(run_dir, manifest, _database(database, manifest, new=False))

    def mark_resumed(self) -> None:
        self.manifest = self.manifest.model_copy(
            update={"resumed_at": [*self.manifest.resumed_at, now()]}
        )
        write_atomic(self.run_dir / MANIFEST, self.manifest.model_dump_json(indent=2))

    def save(self, task: AnyTask, record: AttemptRecord, written: Mapping[str, bytes] = {}) -> None:
        """One attempt, with the files its program `written` when it ran one."""
        write_attempt(self.run_dir, task, record, written)
        self.save_many([(task, record)], artifacts=False)

    def save_many(
        self, items: Sequence[tuple[AnyTask, AttemptRecord]], artifacts: bool = True
    ) -> None:
        """Artifacts first, then every row in one transaction."""
        if artifacts:
            for task, record in items:
                write_attempt(self.run_dir, task, record)
        if self.manifest.schema_version != SCHEMA_VERSION:
            self._upgrade()
        with self._db:
            self._db.executemany(
                f"INSERT OR REPLACE INTO attempts VALUES {_ROW}",
                [(*_key(r), r.outcome.value, r.model_dump_json(), now()) for _, r in items],
            )

    def _upgrade(self) -> None:
        """An older run made one of this schema before it takes a record written in
        it: its attempts rewritten as this schema reads them, in this schema's table,
        in one transaction, and its manifest marked."""
        columns = [row[1] for row in self._db.execute("PRAGMA table_info(attempts)")]
        if columns != _COLUMNS:
            rows = self._db.execute(f"SELECT {', '.join(_COLUMNS_BEFORE)} FROM attempts")
            kept = [
                (self._record(model, task_id, sample, attempt, text), saved_at)
                for model, task_id, sample, attempt, _, text, saved_at in rows.fetchall()
            ]
            with self._db:
                self._db.execute("DROP TABLE attempts")
                self._db.execute(_SCHEMA)
                self._db.executemany(
                    f"INSERT INTO attempts VALUES {_ROW}",
                    [(*_key(r), r.outcome.value, r.model_dump_json(), at) for r, at in kept],
                )
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self.manifest = self.manifest.model_copy(update={"schema_version": SCHEMA_VERSION})
        write_atomic(self.run_dir / MANIFEST, self.manifest.model_dump_json(indent=2))

    def attempts(self, model: str | None = None, mode: str | None = None) -> list[AttemptRecord]:
        """Every stored attempt, or one model's in one `mode` (None: not a question's),
        ordered by model, mode, task, sample and attempt; a StoreError names a record
        that does not validate as an attempt of this store schema."""
        rows = self._db.execute("SELECT model, task_id, sample, attempt, record FROM attempts")
        records = [self._record(*row) for row in rows.fetchall()]
        if model is not None:
            records = [r for r in records if (r.model, r.mode) == (model, mode)]
        return sorted(records, key=_key)

    def _record(
        self, model: str, task_id: str, sample: int, attempt: int, text: str
    ) -> AttemptRecord:
        try:
            record = AttemptRecord.model_validate_json(text)
        except ValidationError as exc:
            where = f"model {model}, task {task_id}, sample {sample}, attempt {attempt}"
            raise unreadable_run(
                self.run_dir / DB_NAME,
                f"holds an attempt that does not validate ({where}: {problem(exc)})",
                self.manifest.codetrial_version,
            ) from exc
        if (
            task_id in self.manifest.repositories
            and record.patch is None
            and record.code is not None
        ):
            record = record.model_copy(update={"patch": record.code, "code": None})
        return self._moded(record)

    def _moded(self, record: AttemptRecord) -> AttemptRecord:
        """A question's round stored before schema 3, its mode taken out of the
        model's name, where schemas 1 and 2 kept it."""
        if record.mode is not None:
            return record
        for mode in self.manifest.config.modes:
            if record.model.endswith(suffix := f" ({mode})"):
                return record.model_copy(
                    update={"model": record.model.removesuffix(suffix), "mode": mode}
                )
        return record

    def task_results(self) -> list[TaskResult]:
        """One TaskResult per (model and mode, task, sample) that has a first attempt,
        in manifest order."""
        grouped: dict[tuple[str, str, int], list[AttemptRecord]] = {}
        for record in self.attempts():
            grouped.setdefault((record.label, record.task_id, record.sample), []).append(record)
        order = {name: i for i, name in enumerate(self.manifest.config.labels)}
        tasks = {task_id: i for i, task_id in enumerate(self.manifest.task_sha256)}
        results = [
            TaskResult(model, task_id, sample, records[0], tuple(records[1:]))
            for (model, task_id, sample), records in grouped.items()
            if records[0].attempt == 0
        ]
        return sorted(
            results, key=lambda r: (order.get(r.model, 99), tasks.get(r.task_id, 0), r.sample)
        )

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()


def _key(record: AttemptRecord) -> tuple[str, str, str, int, int]:
    """Where an attempt is kept: its model, mode ("" for none), task, sample, attempt."""
    return record.model, record.mode or "", record.task_id, record.sample, record.attempt
