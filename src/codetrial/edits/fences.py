"""Fenced blocks in a model's response, and the file paths a response names.

A fence opens with a line of three or more backticks (or tildes), at any indentation,
followed by an optional info string; it closes with a line of only the same character,
at least as many, indented at most three spaces deeper than the opening. A deeper
fence line is content: a docstring may hold one. The body loses the opening's
indentation (a block inside a markdown list item). A fence that reaches the end of the
response unclosed is kept with `closed=False`: the response was cut off, and what the
block holds may be incomplete.

The file a block is for (`Fence.path`), taken tolerantly because models vary:
1. the nearest non-blank line before the fence, when it is a path line;
2. else a path-like word of the info string: ```python react.py, ```react.py,
   ```python:react.py, ```python title="react.py".
A path line holds one path-like word, optionally decorated as markdown: `# react.py`,
`**react.py**`, `` `react.py` ``, `react.py:`, `File: react.py`. A path-like word has a
file extension (`.py`, `.md`) or a slash; a line of prose (several words) is never a
path line. Whether the model may write the file it names is the task's decision, not
this module's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from codetrial.edits.base import Malformed, MalformedKind, clip

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_WORD = re.compile(r"[\w.\-/\\:~]+")
_EXTENSION = re.compile(r"\.[A-Za-z][\w-]*$")
_LABEL = re.compile(r"^(?:file|filename|path)\s*:\s*", re.IGNORECASE)
_DECORATION = "#*`: \t"
_INFO_SEPARATORS = re.compile(r"[\s:=\"',]+")


@dataclass(frozen=True)
class Fence:
    """One fenced block: `number` counts fences from 1 in response order (0 is the
    whole response read as one block); `lines` is the body without line ends."""

    number: int
    lines: tuple[str, ...]
    closed: bool
    path: str | None


def _path_like(word: str) -> bool:
    return bool(_WORD.fullmatch(word)) and ("/" in word or bool(_EXTENSION.search(word)))


def path_claim(line: str) -> str | None:
    """The path `line` names when it is a path line (see the module docstring)."""
    word = _LABEL.sub("", line.strip().strip(_DECORATION)).strip(_DECORATION)
    return word if _path_like(word) else None


def _info_path(info: str) -> str | None:
    return next((word for word in _INFO_SEPARATORS.split(info) if _path_like(word)), None)


def _closes(line: str, fence: str, indent: int) -> bool:
    stripped = line.lstrip(" \t")
    return (
        len(line) - len(stripped) <= indent + 3
        and stripped.rstrip() == fence[0] * len(stripped.rstrip())
        and len(stripped.rstrip()) >= len(fence)
    )


def _dedent(line: str, indent: str) -> str:
    return line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")


def scan(text: str) -> list[Fence]:
    """Every fenced block of `text` (line ends already "\\n"), in order."""
    lines = text.split("\n")
    fences: list[Fence] = []
    before: str | None = None
    i = 0
    while i < len(lines):
        opening = _OPEN.match(lines[i])
        if opening is None:
            before = lines[i] if lines[i].strip() else before
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = next(
            (j for j in range(i + 1, len(lines)) if _closes(lines[j], fence, len(indent))),
            None,
        )
        stop = len(lines) if end is None else end
        named = path_claim(before) if before is not None else None
        fences.append(
            Fence(
                number=len(fences) + 1,
                lines=tuple(_dedent(line, indent) for line in lines[i + 1 : stop]),
                closed=end is not None,
                path=named or _info_path(opening["info"]),
            )
        )
        before = None
        i = stop + 1
    return fences


def regions(text: str, marks: Callable[[str], bool]) -> list[Fence]:
    """The fences whose body has a line that `marks` (a line that starts an edit);
    when no fence has one but the text does, the whole text as one closed, unnamed
    block numbered 0, so that an unfenced answer is read the same way."""
    marked = [fence for fence in scan(text) if any(marks(line) for line in fence.lines)]
    if marked:
        return marked
    lines = tuple(text.split("\n"))
    return [Fence(0, lines, closed=True, path=None)] if any(marks(ln) for ln in lines) else []


def cut_off(fences: list[Fence]) -> Malformed | None:
    """A parse error for the first fence that never closes, when there is one."""
    for fence in fences:
        if not fence.closed:
            named = f" (for {clip(fence.path)})" if fence.path else ""
            return Malformed(
                MalformedKind.PARSE_ERROR,
                f"fenced block {fence.number}{named} is cut off: it has no closing ``` line, "
                "so its edit may be incomplete; answer again, and close every fence",
            )
    return None
