"""Checking an answer on the trusted side, against the question's right answer.

The model's final reply gives the answer; for a chart, the evidence is the file the
program wrote and the data of the figure saved to it. Nothing the program printed
about itself is taken as an answer.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from codetrial.tasks.questions import Answer

_ANSWER = re.compile(r"^[\s*#>`_-]*answer[\s*`_]*[:=][\s*`]*(.*)$", re.IGNORECASE | re.MULTILINE)
# A number standing alone: not part of a word ("S8") or of another number; thousands
# may be grouped with commas.
_NUMBER = re.compile(
    r"(?<![\w.])(?<!\d,)[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w|[.,]\d)"
)


@dataclass(frozen=True)
class Checked:
    correct: bool
    why: str


def final_answer(reply: str) -> str:
    """The answer in a final reply: what follows its last "ANSWER:", else its last
    non-empty line, without the quotes and marks a model wraps it in."""
    found = _ANSWER.findall(reply)
    lines = [line for line in reply.splitlines() if line.strip()]
    text = found[-1] if found else (lines[-1] if lines else "")
    return text.strip().strip("`*\"' ").rstrip(".").strip()


def _number(text: str) -> float | None:
    """The one number in `text` ("$2,221.83", "45.6 %", "8 orders"); None when there
    is none, or more than one ("8 or 9", "1, 2, 3"), which is no single answer."""
    found = [m.group() for m in _NUMBER.finditer(text) if any(c.isdigit() for c in m.group())]
    if len(found) != 1:
        return None
    return float(found[0].replace(",", ""))


def _plain(text: str) -> str:
    return " ".join(str(text).casefold().strip().strip("\"'`").rstrip(".").split())


def _items(text: str) -> list[str]:
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [str(item) for item in parsed]
        text = text.strip("[]")
    return [item for item in (part.strip().strip("\"'") for part in text.split(",")) if item]


def _same(expected: Any, given: str, tolerance: float) -> bool:
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        number = _number(given)
        return number is not None and abs(number - expected) <= tolerance + 1e-9
    return _plain(given) == _plain(str(expected))


def _close(expected: Sequence[float], given: Sequence[float | None], tolerance: float) -> bool:
    return len(expected) == len(given) and all(
        g is not None and math.isfinite(g) and abs(g - e) <= tolerance + 1e-9
        for e, g in zip(expected, given, strict=True)
    )


def check(
    answer: Answer, reply: str, files: Collection[str], figures: Sequence[dict[str, Any]]
) -> Checked:
    """Whether the final `reply` (and, for a chart, the `files` the program wrote and
    the `figures` it saved) gives the right answer, and why not."""
    given = final_answer(reply)
    if answer.kind == "series":
        return _check_chart(answer, files, figures)
    if not given:
        return Checked(False, "no answer in the reply")
    if answer.kind == "number":
        number = _number(given)
        if number is None:
            return Checked(False, f"no number in the answer {given!r}")
        ok = abs(number - float(answer.value)) <= answer.tolerance + 1e-9
        return Checked(ok, "" if ok else f"{number:g} is not {answer.value} ± {answer.tolerance:g}")
    if answer.kind == "string":
        ok = _plain(given) == _plain(answer.value)
        return Checked(ok, "" if ok else f"{given!r} is not {answer.value!r}")
    items = _items(given)
    expected = list(answer.value)
    if answer.ordered:
        ok = len(items) == len(expected) and all(
            _same(e, g, answer.tolerance) for e, g in zip(expected, items, strict=True)
        )
    else:
        ok = _matched(expected, items, answer.tolerance)
    return Checked(ok, "" if ok else f"{items} is not {expected}")


def _matched(expected: Sequence[Any], items: Sequence[str], tolerance: float) -> bool:
    """Whether every expected item is one given item, in any order."""
    left = list(items)
    for wanted in expected:
        match = next((i for i, item in enumerate(left) if _same(wanted, item, tolerance)), None)
        if match is None:
            return False
        del left[match]
    return not left


def _check_chart(
    answer: Answer, files: Collection[str], figures: Sequence[dict[str, Any]]
) -> Checked:
    wanted = os.path.normpath(answer.file)
    if wanted not in {os.path.normpath(name) for name in files}:
        return Checked(False, f"the program wrote no {answer.file}")
    saved = [f for f in figures if f.get("file") == wanted]
    if not saved:
        return Checked(False, f"{answer.file} was not saved from a matplotlib figure")
    plotted = [s.get("y", []) for axes in saved[-1].get("axes", []) for s in axes.get("series", [])]
    if any(_close(answer.value, y, answer.tolerance) for y in plotted):
        return Checked(True, "")
    return Checked(False, f"no series in {answer.file} is {answer.value}; plotted: {plotted}"[:500])
