"""JSON Lines files (plain or gzipped), read with errors that name the line."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codetrial.errors import TaskFormatError


def read_jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """("path:line", object) for every non-blank line; a TaskFormatError otherwise."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"cannot read {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise TaskFormatError(f"{where}: not JSON ({exc})") from exc
        if not isinstance(record, dict):
            raise TaskFormatError(f"{where}: a line must hold a JSON object")
        yield where, record


def first_record(path: Path) -> dict[str, Any] | None:
    """A JSONL file's first object (None in an empty file), to tell its format by."""
    return next((record for _, record in read_jsonl(path)), None)


@dataclass(frozen=True)
class JsonLines:
    """JSON objects to judge, each with where it came from ("path:line" or "item N"),
    the name a run gives their source and what its manifest records of it."""

    items: list[tuple[str, dict[str, Any]]]
    name: str
    source: dict[str, str]

    @classmethod
    def of(cls, samples: Path | str | Iterable[Mapping[str, Any]]) -> JsonLines:
        """A JSONL file (plain or gzipped) or objects passed in Python."""
        if isinstance(samples, Path | str):
            path = Path(samples)
            items = list(read_jsonl(path))
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            return cls(items, path.name, {"file": str(path.resolve()), "sha256": digest})
        items = []
        for number, record in enumerate(samples, start=1):
            if not isinstance(record, Mapping):
                raise TaskFormatError(f"item {number}: a sample must be a dict, not {record!r:.40}")
            items.append((f"item {number}", dict(record)))
        try:
            text = "\n".join(json.dumps(record, sort_keys=True) for _, record in items)
        except (TypeError, ValueError) as exc:
            raise TaskFormatError(f"samples must hold JSON values only: {exc}") from exc
        digest = hashlib.sha256(text.encode()).hexdigest()
        return cls(items, "python", {"file": "(objects passed in Python)", "sha256": digest})

    @property
    def first(self) -> dict[str, Any]:
        """The first object (empty when there is none), to tell the format by."""
        return self.items[0][1] if self.items else {}
