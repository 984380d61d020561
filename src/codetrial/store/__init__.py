"""The run store: a SQLite database, the manifest and the artifact tree of one run.

Every attempt is committed in one transaction after its artifacts are on disk, so
killing the process at any moment loses at most the attempt in flight; `--resume`
picks up from what the database holds.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from codetrial.errors import StoreError
from codetrial.records import AttemptRecord, TaskResult
from codetrial.store.artifacts import write_atomic, write_attempt
from codetrial.store.manifest import Manifest, new_manifest, now, task_digest
from codetrial.tasks import Task

__all__ = ["Manifest", "RunStore", "new_manifest", "new_run_id", "task_digest"]

DB_NAME = "trial.sqlite"
MANIFEST = "manifest.json"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    model TEXT NOT NULL,
    task_id TEXT NOT NULL,
    sample INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    PRIMARY KEY (model, task_id, sample, attempt)
)
"""
_COLUMNS = ["model", "task_id", "sample", "attempt", "outcome", "record", "saved_at"]


def new_run_id(runs_dir: Path, suite: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{Path(suite).name}"
    run_id, n = base, 1
    while (runs_dir / run_id).exists():
        n += 1
        run_id = f"{base}-{n}"
    return run_id


class RunStore:
    def __init__(self, run_dir: Path, manifest: Manifest) -> None:
        self.run_dir = run_dir
        self.manifest = manifest
        try:
            self._db = sqlite3.connect(run_dir / DB_NAME)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(_SCHEMA)
            self._db.commit()
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(attempts)")]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{run_dir / DB_NAME}: not a readable run database ({exc})") from exc
        if columns != _COLUMNS:
            self._db.close()
            raise StoreError(
                f"{run_dir} was written by another version of codetrial (columns {columns}); "
                "run the trial again to get a store this version reads"
            )

    @classmethod
    def create(cls, run_dir: Path, manifest: Manifest) -> RunStore:
        run_dir.mkdir(parents=True, exist_ok=False)
        write_atomic(run_dir / MANIFEST, manifest.model_dump_json(indent=2))
        return cls(run_dir, manifest)

    @classmethod
    def open(cls, run_dir: Path) -> RunStore:
        path = run_dir / MANIFEST
        if not path.is_file() or not (run_dir / DB_NAME).is_file():
            raise StoreError(
                f"{run_dir} is not a codetrial run directory (no {MANIFEST} and {DB_NAME}); "
                "pass the folder that `codetrial run` printed"
            )
        try:
            manifest = Manifest.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise StoreError(f"{path}: unreadable manifest ({exc})") from exc
        return cls(run_dir, manifest)

    def mark_resumed(self) -> None:
        self.manifest = self.manifest.model_copy(
            update={"resumed_at": [*self.manifest.resumed_at, now()]}
        )
        write_atomic(self.run_dir / MANIFEST, self.manifest.model_dump_json(indent=2))

    def save(self, task: Task, record: AttemptRecord) -> None:
        self.save_many([(task, record)])

    def save_many(self, items: list[tuple[Task, AttemptRecord]], artifacts: bool = True) -> None:
        """Artifacts first, then every row in one transaction."""
        if artifacts:
            for task, record in items:
                write_attempt(self.run_dir, task, record)
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO attempts VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (r.model, r.task_id, r.sample, r.attempt, r.outcome.value,
                     r.model_dump_json(), now())
                    for _, r in items
                ],
            )  # fmt: skip

    def attempts(self, model: str | None = None) -> list[AttemptRecord]:
        rows = self._db.execute(
            "SELECT record FROM attempts WHERE (?1 IS NULL OR model = ?1) "
            "ORDER BY model, task_id, sample, attempt",
            (model,),
        ).fetchall()
        return [AttemptRecord.model_validate(json.loads(row[0])) for row in rows]

    def task_results(self) -> list[TaskResult]:
        """One TaskResult per (model, task, sample) that has a first attempt, in
        manifest order."""
        grouped: dict[tuple[str, str, int], list[AttemptRecord]] = {}
        for record in self.attempts():
            grouped.setdefault((record.model, record.task_id, record.sample), []).append(record)
        order = {name: i for i, name in enumerate(self.manifest.config.models)}
        tasks = {task_id: i for i, task_id in enumerate(self.manifest.task_sha256)}
        results = [
            TaskResult(model, task_id, sample, records[0], tuple(records[1:]))
            for (model, task_id, sample), records in grouped.items()
            if records[0].attempt == 0
        ]
        return sorted(
            results, key=lambda r: (order.get(r.model, 99), tasks.get(r.task_id, 0), r.sample)
        )

    def close(self) -> None:
        self._db.close()
