"""How a generated case compares what came back with what was due, as EvalPlus
compares outputs: exactly, except that a float matches a float within a relative
tolerance of 1e-6 (or an absolute one of 1e-9 near zero). `same` is the trusted
side's comparison (of a candidate's answer on a heavy input with the reference's);
the same code, as `source()`, is what generated test files compare with."""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any


def _same(got: Any, want: Any) -> bool:
    """Exact, except floats: within a relative 1e-6 or an absolute 1e-9."""
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(want, (list, tuple)):
        return (
            type(got) is type(want)
            and len(got) == len(want)
            and all(_same(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(_same(got[k], want[k]) for k in want)
        )
    return bool(got == want)


def _case(function: Any, name: str, args: tuple[Any, ...], want: Any) -> None:
    """One generated case; a failure names the input, what came back and what was due."""
    shown = f"{name}{args!r}"
    try:
        got = function(*args)
    except Exception as exc:
        raise AssertionError(f"{shown} raised {type(exc).__name__}: {exc}") from None
    assert _same(got, want), f"{shown} returned {got!r}, expected {want!r}"


same = _same


@functools.cache
def source() -> str:
    """The comparison as source, for generated test files."""
    head = "import math\nfrom typing import Any\n\n\n"
    return head + inspect.getsource(_same) + "\n\n" + inspect.getsource(_case)
