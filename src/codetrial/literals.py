"""Python literals read without executing anything: the argument lists of calls in
test code, and values written as literals."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Set
from typing import Any

from codetrial.syntax import parse

# What ast.literal_eval raises on something that is not a literal (or is too big).
NOT_LITERAL = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)


def literal_calls(sources: Iterable[str], names: Set[str]) -> list[list[Any]]:
    """The argument lists of the calls to any of `names` in `sources`, where every
    argument is a literal and no keyword is given; distinct, in order of first
    appearance. A source that does not parse is skipped."""
    found: list[list[Any]] = []
    seen: set[str] = set()
    for source in sources:
        try:
            tree = parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in names
                and not node.keywords
            ):
                continue
            try:
                args = [ast.literal_eval(arg) for arg in node.args]
            except NOT_LITERAL:
                continue
            if repr(args) not in seen:
                seen.add(repr(args))
                found.append(args)
    return found
