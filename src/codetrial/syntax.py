"""Python source read into syntax trees on the trusted side, without running it.

Everything codetrial parses or compiles outside a sandbox (candidates, edits, tasks,
tests a model wrote) goes through here, for two reasons. Source the parser cannot build
a tree for raises a SyntaxError, whatever the parser raised: nesting too deep for the
tree builder is a RecursionError, a tree too big a MemoryError. And parses take turns:
CPython 3.11 keeps the tree builder's depth count in the interpreter rather than in the
call, so two threads parsing at once (a judge thread's gate and the main thread's
extraction) can fail one another with "SystemError: AST constructor recursion depth
mismatch". Formatting a traceback parses too (to place its carets), and so does
pytest, collecting test files (it rewrites their asserts) and reporting failures: the
harnesses do those in `turns()`. Should a parse outside them still collide with one
here, that parse is made again, a few times at most.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from types import CodeType
from typing import Any, TypeVar

T = TypeVar("T")

_TURNS = threading.RLock()
_UNBUILDABLE = (RecursionError, MemoryError)
_COLLIDED = "recursion depth mismatch"
ATTEMPTS = 3


def turns() -> threading.RLock:
    """The lock every parse here takes: hold it around anything else that parses."""
    return _TURNS


def _syntax_error(message: str, filename: str) -> SyntaxError:
    error = SyntaxError(message)
    error.filename = filename
    return error


def _built(build: Callable[[], T], filename: str) -> T:
    """What `build` builds, in turn; a SyntaxError when the parser cannot build it, and
    made again when a parse elsewhere collided with it."""
    attempt = 1
    while True:
        with _TURNS:
            try:
                return build()
            except _UNBUILDABLE as exc:
                message = f"too deeply nested or too big to parse ({type(exc).__name__})"
                raise _syntax_error(message, filename) from None
            except ValueError as exc:  # null bytes, as some Python versions report them
                raise _syntax_error(str(exc), filename) from None
            except SystemError as exc:
                if _COLLIDED not in str(exc) or attempt == ATTEMPTS:
                    raise
        attempt += 1


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """The module's syntax tree; a SyntaxError when the parser cannot build one."""
    return _built(lambda: ast.parse(source, filename), filename)


def compiled(source: str | ast.Module, filename: str) -> CodeType:
    """Source or a module's tree compiled; a SyntaxError when the parser cannot."""
    return _built(lambda: compile(source, filename, "exec"), filename)


def literal(source: str) -> Any:
    """The value a Python literal writes, read as ast.literal_eval reads it (and raising
    what it raises on anything else)."""
    tree = _built(lambda: ast.parse(source.lstrip(" \t"), mode="eval"), "<literal>")
    return ast.literal_eval(tree)


def described(exc: SyntaxError, path: str | None = None) -> str:
    """A SyntaxError (or IndentationError) said as Python says it, with the file when
    given and the line when the parser knew it."""
    where = [w for w in (path, f"line {exc.lineno}" if exc.lineno else None) if w]
    return f"{type(exc).__name__}: {exc.msg}" + (f" ({', '.join(where)})" if where else "")
