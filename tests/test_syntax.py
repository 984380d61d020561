"""Code parsed on the trusted side: what the parser cannot build a tree for is a syntax
error, and threads that parse at once do not fail one another."""

from __future__ import annotations

import ast
import gc
import threading
import time
from collections.abc import Callable

import pytest

from codetrial.extract import extract
from codetrial.records import Outcome
from codetrial.selection.generated import runs_as_one
from codetrial.syntax import ATTEMPTS, literal, parse
from codetrial.tasks import Task
from tests.conftest import fenced

TOO_DEEP = "def add(a, b):\n    return " + "-" * 5000 + "a\n"


def test_nesting_too_deep_for_the_parser_is_a_syntax_error(add_task: Task, judge_code) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RecursionError):
        ast.parse(TOO_DEEP)
    assert extract(TOO_DEEP, "add").code == TOO_DEEP
    assert extract(fenced(TOO_DEEP), "add", definitions_only=True).code == TOO_DEEP
    verdict = judge_code(TOO_DEEP, add_task)
    assert verdict.outcome is Outcome.SYNTAX_ERROR
    assert verdict.detail == "SyntaxError: too deeply nested or too big to parse (RecursionError)"
    with pytest.raises(SyntaxError):
        literal("-" * 5000 + "1")
    assert not runs_as_one(["assert add(" + "-" * 5000 + "1, 2) == 3"])


def _mismatches(parser: Callable[[str], ast.Module]) -> list[str]:
    """The SystemErrors two threads get parsing the same source 100 times each, starting
    at different stack depths, while every garbage collection (and a parse allocates
    enough to start many) lets the other thread in."""
    source = "".join(
        f"def f{i}(x):\n    return [y * {i} for y in range(x) if y % 3]\n" for i in range(200)
    )
    errors: list[str] = []

    def work(depth: int) -> None:
        if depth:
            return work(depth - 1)
        for _ in range(100):
            try:
                parser(source)
            except SystemError as exc:
                errors.append(str(exc))

    def yield_the_gil(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            time.sleep(0)

    gc.callbacks.append(yield_the_gil)
    try:
        threads = [threading.Thread(target=work, args=(depth,)) for depth in (0, 9)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.callbacks.remove(yield_the_gil)
    return errors


def test_threads_parsing_at_once_do_not_fail_one_another() -> None:
    if not _mismatches(ast.parse):
        pytest.skip("this Python's parser does not fail threads that parse at once")
    assert _mismatches(parse) == []


def test_a_parse_another_parse_collided_with_is_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """What parses outside codetrial's turns (pytest rewriting asserts) can still
    collide with a parse here; that one is made again, a few times at most."""
    real = ast.parse
    calls: list[str] = []
    collide = {"times": ATTEMPTS - 1}

    def colliding(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
        calls.append(source)
        if len(calls) <= collide["times"]:
            raise SystemError("AST constructor recursion depth mismatch (before=3, after=9)")
        return real(source, filename, mode)

    monkeypatch.setattr(ast, "parse", colliding)
    assert isinstance(parse("x = 1\n"), ast.Module) and len(calls) == ATTEMPTS
    calls.clear()
    collide["times"] = ATTEMPTS
    with pytest.raises(SystemError, match="mismatch"):
        parse("x = 1\n")
