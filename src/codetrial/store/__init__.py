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
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    PRIMARY KEY (model, task_id, attempt)
)
"""


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
        self._db = sqlite3.connect(run_dir / DB_NAME)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)
        self._db.commit()

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
        write_attempt(self.run_dir, task, record)
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO attempts VALUES (?, ?, ?, ?, ?, ?)",
                (
                    record.model,
                    record.task_id,
                    record.attempt,
                    record.outcome.value,
                    record.model_dump_json(),
                    now(),
                ),
            )

    def attempts(self, model: str | None = None, task_id: str | None = None) -> list[AttemptRecord]:
        rows = self._db.execute(
            "SELECT record FROM attempts WHERE (?1 IS NULL OR model = ?1) "
            "AND (?2 IS NULL OR task_id = ?2) ORDER BY model, task_id, attempt",
            (model, task_id),
        ).fetchall()
        return [AttemptRecord.model_validate(json.loads(row[0])) for row in rows]

    def task_results(self) -> list[TaskResult]:
        """One TaskResult per (model, task) that has a first attempt, in manifest order."""
        grouped: dict[tuple[str, str], list[AttemptRecord]] = {}
        for record in self.attempts():
            grouped.setdefault((record.model, record.task_id), []).append(record)
        order = {name: i for i, name in enumerate(self.manifest.config.models)}
        tasks = {task_id: i for i, task_id in enumerate(self.manifest.task_sha256)}
        results = [
            TaskResult(model, task_id, records[0], tuple(records[1:]))
            for (model, task_id), records in grouped.items()
            if records[0].attempt == 0
        ]
        return sorted(results, key=lambda r: (order.get(r.model, 99), tasks.get(r.task_id, 0)))

    def close(self) -> None:
        self._db.close()
