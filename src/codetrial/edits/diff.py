"""The `diff` edit format: SEARCH/REPLACE blocks, as on aider's leaderboard.

    react.py
    ```python
    <<<<<<< SEARCH
            self.value = None
    =======
            self.value = initial_value
    >>>>>>> REPLACE
    ```

Reading. A marker line is 5 to 9 of its character, then (for SEARCH and REPLACE) the
word, trailing spaces allowed. Blocks are read from the fences that hold a SEARCH or
REPLACE marker, or from the whole response when no fence does. A fence may hold several
blocks. The file of a block is, in order: a path line inside the fence before it (as
`diff-fenced` answers put it), the fence's own name (the line before it or its info
string, see `codetrial.edits.fences`), the previous block's file, or the task's only
editable file. A block without its `=======` or REPLACE line, a marker inside a block
where another should be, a REPLACE marker with no SEARCH before it, or a fence that
never closes, is a parse error; a lone `=======` between blocks is prose (a markdown
heading's underline) and is ignored.

Applying. Blocks apply in response order, each to the file as the blocks before it
left it. SEARCH is whole lines, matched:
1. exactly: the first occurrence is replaced, even when the text occurs again, since
   the model chose that text (the leaderboard's rule);
2. else ignoring trailing whitespace, and only when one place matches;
3. else ignoring one indentation change of the whole block, and only when one place
   matches; REPLACE is re-indented by the same change.
A tolerant match at more than one place is ambiguous and is never guessed. An empty
SEARCH (no line, or only blank lines) creates a file the task lets the model create,
or fills a file that is empty; in a file with content it matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import codetrial.edits.matching as matching
from codetrial.edits.base import (
    EDIT_FORMATS,
    Applied,
    EditFormat,
    Malformed,
    MalformedKind,
    Workspace,
    clip,
)
from codetrial.edits.fences import Fence, cut_off, path_claim, regions

_SEARCH = re.compile(r"^<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} ?REPLACE\s*$")
_NAMES = {_SEARCH: "<<<<<<< SEARCH", _DIVIDER: "=======", _REPLACE: ">>>>>>> REPLACE"}


@dataclass(frozen=True)
class Block:
    number: int  # counts blocks from 1 in response order
    path: str  # as the response names it, not yet checked
    search: tuple[str, ...]
    replace: tuple[str, ...]

    def label(self) -> str:
        return f"SEARCH/REPLACE block {self.number} (for {clip(self.path)})"


def _marker(line: str) -> re.Pattern[str] | None:
    return next((pattern for pattern in _NAMES if pattern.match(line)), None)


def _section(lines: Sequence[str], start: int, end: re.Pattern[str]) -> int | str:
    """The index of the `end` marker that closes the section from `start`, or what
    stands in the way."""
    for index in range(start, len(lines)):
        found = _marker(lines[index])
        if found is end:
            return index
        if found is not None:
            return f"has {_NAMES[found]} where {_NAMES[end]} should be"
    return f"is cut off: it has no {_NAMES[end]} line"


def _block(
    lines: Sequence[str], start: int, number: int, path: str | None
) -> tuple[Block, int] | str:
    """The block whose SEARCH marker is at `start` and the index after it, or what is
    wrong with it."""
    if path is None:
        return "names no file: put the file's path on the line before its fence"
    divider = _section(lines, start + 1, _DIVIDER)
    if isinstance(divider, str):
        return divider
    end = _section(lines, divider + 1, _REPLACE)
    if isinstance(end, str):
        return end
    search, replace = tuple(lines[start + 1 : divider]), tuple(lines[divider + 1 : end])
    return Block(number, path, search, replace), end + 1


def _blocks(fences: list[Fence], sole: str | None) -> list[Block] | Malformed:
    """Every block, with the file it is for; a stray `=======` outside a block is prose
    (a markdown heading), a stray REPLACE marker means a missing SEARCH one."""
    blocks: list[Block] = []
    path: str | None = None
    for fence in fences:
        path = fence.path or path
        index = 0
        while index < len(fence.lines):
            line = fence.lines[index]
            parsed: tuple[Block, int] | str
            if _SEARCH.match(line):
                parsed = _block(fence.lines, index, len(blocks) + 1, path or sole)
            elif _REPLACE.match(line):
                parsed = f"has {_NAMES[_REPLACE]} without a {_NAMES[_SEARCH]} line before it"
            else:
                path = path_claim(line) or path
                index += 1
                continue
            if isinstance(parsed, str):
                named = path or sole
                where = f" (for {clip(named)})" if named else ""
                return Malformed(
                    MalformedKind.PARSE_ERROR,
                    f"SEARCH/REPLACE block {len(blocks) + 1}{where} {parsed}",
                )
            block, index = parsed
            blocks.append(block)
            path = block.path
    return blocks


def _ambiguous(block: Block, how: str, starts: list[int]) -> Malformed:
    return Malformed(
        MalformedKind.AMBIGUOUS,
        f"the SEARCH text of {block.label()} matches only {how}, and at lines "
        f"{matching.describe(starts)}; copy the lines exactly, or add lines around them "
        "that occur once",
    )


def _locate(lines: list[str], block: Block) -> tuple[int, list[str]] | Malformed:
    """Where the SEARCH text starts, and the lines to put in its place."""
    starts = matching.exact(lines, block.search)
    if starts:
        return starts[0], list(block.replace)
    starts = matching.loose(lines, block.search)
    if len(starts) == 1:
        return starts[0], list(block.replace)
    if starts:
        return _ambiguous(block, "ignoring trailing whitespace", starts)
    shifts = matching.shifted(lines, block.search)
    if len(shifts) == 1:
        return shifts[0].start, shifts[0].apply(block.replace)
    if shifts:
        return _ambiguous(block, "ignoring indentation", [shift.start for shift in shifts])
    return Malformed(
        MalformedKind.NO_MATCH,
        f"the SEARCH text of {block.label()} matches nothing in the file; SEARCH must "
        f"copy existing lines exactly; {matching.nearest(lines, block.search)}",
    )


def _apply(block: Block, path: str, lines: list[str] | None) -> list[str] | Malformed:
    """`lines` (None for a file that does not exist yet) after `block`."""
    if not any(line.strip() for line in block.search):
        if lines is None or not any(line.strip() for line in lines):
            return matching.terminated(block.replace)
        return Malformed(
            MalformedKind.NO_MATCH,
            f"{block.label()} has an empty SEARCH section, which only creates a file or "
            f"fills an empty one, and {clip(path)} is not empty: copy the lines to replace "
            "into SEARCH",
        )
    if lines is None:
        return Malformed(
            MalformedKind.NO_MATCH,
            f"{block.label()} searches {clip(path)}, which does not exist yet: create it "
            "with a block whose SEARCH section is empty",
        )
    located = _locate(lines, block)
    if isinstance(located, Malformed):
        return located
    start, replace = located
    return [*lines[:start], *matching.terminated(replace), *lines[start + len(block.search) :]]


def edit_diff(text: str, workspace: Workspace) -> Applied | Malformed:
    """The files the response's SEARCH/REPLACE blocks change (see the module docstring)."""
    fences = regions(text, lambda line: _marker(line) in (_SEARCH, _REPLACE))
    if not fences:
        return Malformed(
            MalformedKind.NO_EDIT,
            "the response has no SEARCH/REPLACE block: put the file's path on a line, then a "
            "fence holding <<<<<<< SEARCH, the lines to find, =======, their replacement, "
            ">>>>>>> REPLACE",
        )
    problem = cut_off(fences)
    if problem is not None:
        return problem
    blocks = _blocks(fences, workspace.sole_editable())
    if isinstance(blocks, Malformed):
        return blocks
    files: dict[str, list[str] | None] = {}
    for block in blocks:
        path = workspace.writable(block.path)
        if isinstance(path, Malformed):
            return path
        if path not in files:
            current = workspace.files.get(path)
            files[path] = None if current is None else matching.split(current)
        edited = _apply(block, path, files[path])
        if isinstance(edited, Malformed):
            return edited
        files[path] = edited
    return workspace.finish(
        {path: "".join(lines) for path, lines in files.items() if lines is not None}
    )


DIFF = EditFormat("diff", edit_diff)
EDIT_FORMATS.register(DIFF.name, DIFF)
