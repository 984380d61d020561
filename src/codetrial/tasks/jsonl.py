"""JSON Lines files (plain or gzipped), read with errors that name the line."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
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
