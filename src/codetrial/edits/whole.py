"""The `whole` edit format: every changed file in full, as on aider's leaderboard.

    react.py
    ```python
    class InputCell:
        ...
    ```

Each fenced block that names a file (see `codetrial.edits.fences` for where a name is
read from) replaces that file with the block's body, every line ending with a newline.
Blocks that name no file are explanations or examples and are ignored, except in one
case: when no block names a file, the task has exactly one editable file and the
response exactly one fenced block, that block is the file. With more unnamed blocks
the response is ambiguous: which one is the file cannot be told, and is never guessed.

A named block that is cut off (the fence never closes) is a parse error, since the
file would be truncated; a file given twice is ambiguous.
"""

from __future__ import annotations

from codetrial.edits.base import (
    EDIT_FORMATS,
    Applied,
    EditFormat,
    Malformed,
    MalformedKind,
    Workspace,
    clip,
)
from codetrial.edits.fences import Fence, cut_off, scan

_HOW = "put each file's path on the line before its fenced block"


def _named(fences: list[Fence], workspace: Workspace) -> list[tuple[str, Fence]] | Malformed:
    """Each file block with the path it claims (before any check of that path)."""
    named = [(fence.path, fence) for fence in fences if fence.path is not None]
    if named:
        return named
    sole = workspace.sole_editable()
    if sole is None:
        return Malformed(
            MalformedKind.PARSE_ERROR,
            f"none of the {len(fences)} fenced blocks names a file: {_HOW}",
        )
    if len(fences) > 1:
        return Malformed(
            MalformedKind.AMBIGUOUS,
            f"the response has {len(fences)} fenced blocks and none names a file, so which "
            f"one is the new {sole} cannot be told: {_HOW}, or give only that block",
        )
    return [(sole, fences[0])]


def edit_whole(text: str, workspace: Workspace) -> Applied | Malformed:
    """The files the response gives in full (see the module docstring)."""
    fences = scan(text)
    if not fences:
        return Malformed(
            MalformedKind.NO_EDIT,
            f"the response has no fenced code block: {_HOW}, with the file's whole content",
        )
    named = _named(fences, workspace)
    if isinstance(named, Malformed):
        return named
    problem = cut_off([fence for _, fence in named])
    if problem is not None:
        return problem
    contents: dict[str, str] = {}
    given: dict[str, int] = {}
    for claim, fence in named:
        path = workspace.writable(claim)
        if isinstance(path, Malformed):
            return path
        if path in given:
            return Malformed(
                MalformedKind.AMBIGUOUS,
                f"{clip(path)} is given twice (fenced blocks {given[path]} and {fence.number}); "
                "give each file once, in full",
            )
        given[path] = fence.number
        contents[path] = "".join(line + "\n" for line in fence.lines)
    return workspace.finish(contents)


WHOLE = EditFormat("whole", edit_whole)
EDIT_FORMATS.register(WHOLE.name, WHOLE)
