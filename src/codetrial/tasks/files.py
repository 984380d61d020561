"""Reading a task's files: their text and their syntax, with errors that name the file."""

from __future__ import annotations

import ast
from pathlib import Path

from codetrial.errors import TaskFormatError
from codetrial.syntax import parse


def read_task_file(path: Path) -> str:
    """A task file's text; a TaskFormatError names the file when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskFormatError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise TaskFormatError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


def parsed(source: str, where: str) -> ast.Module:
    """The source's syntax tree; a TaskFormatError names the place and the line."""
    try:
        return parse(source)
    except SyntaxError as exc:
        raise TaskFormatError(
            f"{where}, line {exc.lineno}: not valid Python ({exc.msg}); fix the task's file"
        ) from exc
