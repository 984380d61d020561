"""A program's output compared with a case's expected output, on the trusted side, as
contest judges compare them:

    exact    the same text, character for character;
    tokens   the same whitespace-separated tokens: spaces, tabs, line ends (\\n or
             \\r\\n) and blank lines at the end count as one separator (the default);
    float    tokens, where an expected token that is a number matches any number within
             `abs_tol` of it or within `rel_tol` of its size; other tokens must be equal;
    value    both are Python literals (a function's returned value written out), equal
             as values are in Python (`[1, 2]` is `[1,2]`, `1` is `1.0`); they are read
             as literals, never run;
    livecodebench
             as LiveCodeBench's evaluator compares them: both stripped and cut at each
             `\n`, as many lines each, each line stripped and either the same text or
             the same numbers by value (its tokens read as `Decimal`s: `7.0`, `07`,
             `+7` and `7` are one number; `0.5` is not `0.5000001`).

`difference` says where two outputs first differ, or None when they match.
"""

from __future__ import annotations

import ast
import math
from decimal import Decimal

from codetrial.literals import NOT_LITERAL

SHOWN = 60  # characters of a token shown in a difference
VALUE_CHARS = 100_000  # the longest literal read as a value


def difference(
    mode: str, expected: str, got: str, *, abs_tol: float = 0.0, rel_tol: float = 0.0
) -> str | None:
    """Where `got` first differs from `expected` under `mode`, in words; None when
    they match."""
    if mode == "exact":
        return None if got == expected else _first_char(expected, got)
    if mode == "value":
        return _value_difference(expected, got)
    if mode == "livecodebench":
        return _line_difference(expected, got)
    want, have = expected.split(), got.split()
    for index, (one, other) in enumerate(zip(want, have, strict=False)):
        if one == other or (mode == "float" and _close(one, other, abs_tol, rel_tol)):
            continue
        return f"token {index + 1}: expected {_cut(one)}, got {_cut(other)}"
    if len(want) != len(have):
        return f"expected {len(want)} tokens, got {len(have)}"
    return None


def _value_difference(expected: str, got: str) -> str | None:
    values = []
    for name, text in (("expected output", expected), ("answer", got)):
        try:
            if len(text) > VALUE_CHARS:
                raise ValueError(text)
            values.append(ast.literal_eval(text.strip()))
        except NOT_LITERAL:
            return f"the {name} {_cut(text.strip())} is not a Python literal"
    if values[0] == values[1]:
        return None
    return f"expected {_cut(expected.strip())}, got {_cut(got.strip())}"


def _line_difference(expected: str, got: str) -> str | None:
    want, have = _stripped_lines(expected), _stripped_lines(got)
    if len(want) != len(have):
        return f"expected {len(want)} lines, got {len(have)}"
    for index, (one, other) in enumerate(zip(want, have, strict=True)):
        if one != other and not _same_numbers(one, other):
            return f"line {index + 1}: expected {_cut(one)}, got {_cut(other)}"
    return None


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _same_numbers(expected: str, got: str) -> bool:
    """Whether both lines are numbers alone and the same numbers by value; a line with
    a signalling NaN, which no comparison may read, is no number."""
    try:
        want, have = ([Decimal(token) for token in line.split()] for line in (expected, got))
        return want == have
    except ArithmeticError:
        return False


def _close(expected: str, got: str, abs_tol: float, rel_tol: float) -> bool:
    try:
        want, have = float(expected), float(got)
    except ValueError:
        return False
    if not (math.isfinite(want) and math.isfinite(have)):
        return False
    return abs(want - have) <= max(abs_tol, rel_tol * abs(want))


def _first_char(expected: str, got: str) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
        min(len(expected), len(got)),
    )
    line = expected.count("\n", 0, at) + 1
    return (
        f"character {at + 1} (line {line}): expected {_cut(expected[at : at + 20])}, "
        f"got {_cut(got[at : at + 20])}"
    )


def _cut(text: str) -> str:
    return repr(text if len(text) <= SHOWN else text[:SHOWN] + "...")
