"""Python source read into syntax trees on the trusted side, without running it.

Everything codetrial parses outside a sandbox (candidates, edits, tasks, tests a model
wrote) goes through here, for two reasons. Source the parser cannot build a tree for
raises a SyntaxError, whatever the parser raised: nesting too deep for the tree builder
is a RecursionError, a tree too big a MemoryError. And parses take turns: CPython 3.11
keeps the tree builder's depth count in the interpreter rather than in the call, so two
threads parsing at once (a judge thread's gate and the main thread's extraction) can fail
one another with "SystemError: AST constructor recursion depth mismatch".
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_TURNS = threading.RLock()
_UNBUILDABLE = (RecursionError, MemoryError)


def _unbuildable(exc: BaseException, filename: str) -> SyntaxError:
    error = SyntaxError(f"too deeply nested or too big to parse ({type(exc).__name__})")
    error.filename = filename
    return error


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """The module's syntax tree; a SyntaxError when the parser cannot build one."""
    with _TURNS:
        try:
            return ast.parse(source, filename)
        except _UNBUILDABLE as exc:
            raise _unbuildable(exc, filename) from None


def literal(source: str) -> Any:
    """The value a Python literal writes, read as ast.literal_eval reads it (and raising
    what it raises on anything else)."""
    with _TURNS:
        try:
            tree = ast.parse(source.lstrip(" \t"), mode="eval")
        except _UNBUILDABLE as exc:
            raise _unbuildable(exc, "<literal>") from None
    return ast.literal_eval(tree)


def described(exc: SyntaxError, path: str | None = None) -> str:
    """A SyntaxError (or IndentationError) said as Python says it, with the file when
    given and the line when the parser knew it."""
    where = [w for w in (path, f"line {exc.lineno}" if exc.lineno else None) if w]
    return f"{type(exc).__name__}: {exc.msg}" + (f" ({', '.join(where)})" if where else "")
