"""Finding an edit's lines in a file, exactly or tolerantly, and describing a miss.

Both the `diff` and the `udiff` formats locate a run of whole lines in a file and
replace it. A file is held as a list of lines that keep their "\\n" (only the last may
lack it); an edit's lines come without line ends, and the lines that replace a run
get "\\n" each, so a file edited at its end ends with a newline: a fenced block cannot
say otherwise.

Three ways to match a run, from strict to tolerant:
- `exact`: every line equal;
- `loose`: equal once trailing whitespace is removed (models drop or add it freely);
- `shifted`: equal but for one indentation change applied to every line of the run (a
  model that quotes a method without its class's indentation). The replacement is then
  shifted the same way.
Each returns every place that matches; choosing among several is the format's rule.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from codetrial.edits.base import clip


@dataclass(frozen=True)
class Shift:
    """A match at `start` once `remove` (the edit's common indentation) is replaced by
    `add` (the file's indentation at that place) on every non-blank line."""

    start: int
    remove: str
    add: str

    def apply(self, lines: Sequence[str]) -> list[str]:
        """`lines` re-indented; a line indented less than `remove` is kept as it is."""
        return [self._move(line) for line in lines]

    def _move(self, line: str) -> str:
        if line.strip() and line.startswith(self.remove):
            return self.add + line[len(self.remove) :]
        return line


def split(text: str) -> list[str]:
    """`text` as lines that keep their "\\n"; only "\\n" ends a line."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def terminated(lines: Sequence[str]) -> list[str]:
    """An edit's lines, ready to go into a file."""
    return [line + "\n" for line in lines]


def _occurrences(
    file: Sequence[str], needle: Sequence[str], key: Callable[[str], str]
) -> list[int]:
    keys = [key(line) for line in file]
    wanted = [key(line) for line in needle]
    size = len(wanted)
    return [start for start in range(len(keys) - size + 1) if keys[start : start + size] == wanted]


def exact(file: Sequence[str], needle: Sequence[str]) -> list[int]:
    return _occurrences(file, needle, lambda line: line.rstrip("\n"))


def loose(file: Sequence[str], needle: Sequence[str]) -> list[int]:
    return _occurrences(file, needle, str.rstrip)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _prefix(window: Sequence[str], body: Sequence[str]) -> str | None:
    """The one indentation that turns `body` into `window`, if there is one."""
    prefix: str | None = None
    for have, want in zip((line.rstrip() for line in window), body, strict=True):
        if not want or not have:
            if want or have:
                return None
            continue
        lead = have[: len(have) - len(want)]
        if not have.endswith(want) or lead.strip() or prefix not in (None, lead):
            return None
        prefix = lead
    return prefix


def shifted(file: Sequence[str], needle: Sequence[str]) -> list[Shift]:
    indents = [_indent(line) for line in needle if line.strip()]
    common = os.path.commonprefix(indents)  # noqa: RUF071 (whitespace, not paths)
    body = [line[len(common) :].rstrip() for line in needle]
    size = len(needle)
    shifts = []
    for start in range(len(file) - size + 1):
        prefix = _prefix(file[start : start + size], body)
        if prefix is not None:
            shifts.append(Shift(start, common, prefix))
    return shifts


def nearest(file: Sequence[str], needle: Sequence[str], shown: int = 5) -> str:
    """The lines of `file` most like `needle`, numbered, for a reason to quote."""
    if not file:
        return "the file is empty"
    # Where the needle starts is what a reader needs, so its first lines are compared.
    size = max(1, min(len(needle), len(file), 2 * shown))
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2("\n".join(line.strip() for line in needle[:size]))
    stripped = [line.strip() for line in file]

    def likeness(start: int, measure: Callable[[], float]) -> float:
        matcher.set_seq1("\n".join(stripped[start : start + size]))
        return measure()

    # The character-count bound is cheap; the real ratio is computed for the few best.
    starts = range(len(file) - size + 1)
    few = sorted(starts, key=lambda start: -likeness(start, matcher.quick_ratio))[:8]
    best = max(sorted(few), key=lambda start: likeness(start, matcher.ratio))
    picked = file[best : best + min(size, shown)]
    quoted = "\n".join(
        f"{best + k + 1:>4}| {clip(line.rstrip(), 60)}" for k, line in enumerate(picked)
    )
    last = best + len(picked)
    span = f"line {last}" if len(picked) == 1 else f"lines {best + 1}-{last}"
    return f"the nearest {span} of the file:\n{quoted}"


def describe(starts: Sequence[int], shown: int = 5) -> str:
    """Match positions as 1-based line numbers, for a reason."""
    lines = ", ".join(str(start + 1) for start in starts[:shown])
    return lines + (f" and {len(starts) - shown} more" if len(starts) > shown else "")
