"""The `udiff` edit format: a unified diff, applied by a tolerant patcher.

    ```diff
    --- react.py
    +++ react.py
    @@ ... @@
     class InputCell:
         def __init__(self, initial_value):
    -        self.value = None
    +        self.value = initial_value
    ```

Reading. Hunks are read from the fences that hold an `@@` or `+++` line, or from the
whole response when no fence does. A `--- X` line followed by `+++ Y` starts a file,
named by Y (X may be /dev/null for a new file; Y = /dev/null, a deletion, is refused).
A leading `a/` or `b/` is dropped unless the task has a file by the full name. A hunk
starts at an `@@` line, whose numbers are optional, or directly after a file header;
hunks before any header are for the task's only editable file. A hunk's lines start
with ' ', '-', '+' or '\\'; an empty line is a blank context line (models drop that
space) and trailing empty lines are not part of the hunk. The hunk ends at the first
other line. Inside a fence, a '-' or '+' line after that one and before the next hunk
means a line lost its prefix: a parse error rather than a guess. (Outside fences the
rest is prose, where '- ' starts a list item.)

Applying. Models, small ones above all, get hunk line numbers wrong but copy context
lines right; so each hunk is located by its text and the numbers only break ties. A
hunk's "before" text (context and removed lines) is searched in the file as the
earlier hunks left it, exactly, then ignoring trailing whitespace. One place: the
hunk applies there. Several: the hunks of a diff come in file order, so places above
the end of the previous hunk are set aside; if several remain, the hunk's old-side
line number (moved by what earlier hunks added or removed) settles it when it points
at exactly one of them; otherwise the hunk is ambiguous. No place: no_match, quoting
the nearest lines. A hunk that changes nothing is skipped, since where it would go
does not matter; a hunk with no before text can only fill an empty or new file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

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
from codetrial.edits.fences import Fence, cut_off, regions

_HUNK = re.compile(r"^@@(?:\s*-(?P<line>\d+))?")
_PREFIXES = (" ", "-", "+", "\\")


@dataclass(frozen=True)
class Hunk:
    number: int  # counts hunks from 1 in response order
    lines: tuple[tuple[str, str], ...]  # (tag, text): ' ' context, '-' removed, '+' added
    line: int | None  # the old-side start line its header gives: a hint only
    newline_at_end: bool  # False after "\ No newline at end of file" on the new side

    @property
    def before(self) -> tuple[str, ...]:
        return tuple(text for tag, text in self.lines if tag != "+")

    @property
    def after(self) -> tuple[str, ...]:
        return tuple(text for tag, text in self.lines if tag != "-")

    def new_lines(self, run: Sequence[str]) -> list[str]:
        """The lines that take the place of `run`, the file's lines the hunk matched.
        Context lines are the file's own: a loose match keeps the file's whitespace."""
        kept = iter(run)
        new = []
        for tag, text in self.lines:
            if tag != "+":
                text = next(kept).rstrip("\n")
            if tag != "-":
                new.append(text)
        return matching.terminated(new)


@dataclass(frozen=True)
class FilePatch:
    path: str | None  # as the `+++` line names it; None before any header
    hunks: tuple[Hunk, ...]


def _is_header(lines: Sequence[str], index: int) -> bool:
    return (
        lines[index].startswith("--- ")
        and index + 1 < len(lines)
        and lines[index + 1].startswith("+++ ")
    )


def _header_path(line: str) -> str:
    return line[4:].split("\t")[0].strip()


def _in_hunk(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    return (not line or line.startswith(_PREFIXES)) and not (
        line.startswith("@@") or _is_header(lines, index)
    )


def _hunk(lines: Sequence[str], start: int, number: int, hint: int | None) -> tuple[Hunk, int]:
    """The hunk whose first body line is at `start`, and the index where it ends."""
    end = start
    while end < len(lines) and _in_hunk(lines, end):
        end += 1
    body = list(lines[start:end])
    while body and not body[-1]:
        body.pop()
    tagged: list[tuple[str, str]] = []
    newline_at_end = True
    for line in body:
        tag, text = (line[0], line[1:]) if line else (" ", "")
        if tag != "\\":
            tagged.append((tag, text))
        elif tagged and tagged[-1][0] != "-":
            newline_at_end = False
    return Hunk(number, tuple(tagged), hint, newline_at_end), end


def _lost_prefix(lines: Sequence[str], end: int) -> bool:
    """Whether a '-' or '+' line follows the line that ended a hunk at `end`, before the
    next hunk or file header."""
    for index in range(end, len(lines)):
        if lines[index].startswith("@@") or _is_header(lines, index):
            return False
        if lines[index].startswith(("-", "+")):
            return True
    return False


def _read(fences: list[Fence]) -> list[FilePatch] | Malformed:
    """Every file's hunks, in response order."""
    patches = [FilePatch(None, ())]
    count = 0
    for fence in fences:
        lines, index, opened = fence.lines, 0, False
        while index < len(lines):
            line = lines[index]
            if _is_header(lines, index):
                path = _header_path(lines[index + 1])
                if path == "/dev/null":
                    deleted = clip(_header_path(line))
                    return Malformed(
                        MalformedKind.PARSE_ERROR,
                        f"the diff deletes {deleted}; deleting files is not supported",
                    )
                patches.append(FilePatch(path, ()))
                index, opened = index + 2, True
                continue
            hunk_line = _HUNK.match(line)
            if hunk_line is None and not (opened and line.startswith(_PREFIXES)):
                index, opened = index + 1, False
                continue
            count += 1
            hint = int(hunk_line["line"]) if hunk_line and hunk_line["line"] else None
            body = index + 1 if hunk_line else index
            hunk, index = _hunk(lines, body, count, hint)
            patches[-1] = replace(patches[-1], hunks=(*patches[-1].hunks, hunk))
            opened = False
            if fence.number and _lost_prefix(lines, index):
                return Malformed(
                    MalformedKind.PARSE_ERROR,
                    f"hunk {count}: the line {clip(lines[index])!r} does not start with "
                    "' ', '-' or '+'; every line of a hunk needs one (' ' for context)",
                )
    return [patch for patch in patches if patch.hunks]


def _target(patch: FilePatch, workspace: Workspace) -> str | Malformed:
    """The file a patch is for, when the model may write it."""
    claim = patch.path
    if claim is None:
        sole = workspace.sole_editable()
        if sole is not None:
            return sole
        return Malformed(
            MalformedKind.PARSE_ERROR,
            f"hunk {patch.hunks[0].number} comes before any '--- path' and '+++ path' lines "
            "naming its file",
        )
    if claim[:2] in ("a/", "b/") and not workspace.knows(claim):
        claim = claim[2:]
    return workspace.writable(claim)


def _locate(lines: list[str], hunk: Hunk, cursor: int, moved: int, path: str) -> int | Malformed:
    """Where the hunk's before text starts (see the module docstring for the rule)."""
    starts = matching.exact(lines, hunk.before) or matching.loose(lines, hunk.before)
    label = f"hunk {hunk.number} (for {clip(path)})"
    if not starts:
        return Malformed(
            MalformedKind.NO_MATCH,
            f"the context and removed lines of {label} match nothing in the file; copy "
            f"them exactly from the file; {matching.nearest(lines, hunk.before)}",
        )
    chosen = starts
    if len(chosen) > 1:
        chosen = [start for start in chosen if start >= cursor]
    if len(chosen) > 1 and hunk.line is not None:
        chosen = [start for start in chosen if start == hunk.line - 1 + moved]
    if len(chosen) == 1:
        return chosen[0]
    return Malformed(
        MalformedKind.AMBIGUOUS,
        f"the context and removed lines of {label} occur at lines "
        f"{matching.describe(starts)}, and neither the order of the hunks nor its line "
        "number tells which is meant; add context lines that occur once",
    )


def _patch(lines: list[str], hunks: Sequence[Hunk], path: str) -> list[str] | Malformed:
    """`lines` after the hunks of one file patch, applied in order."""
    cursor = moved = 0
    for hunk in hunks:
        if hunk.before == hunk.after:
            continue
        if any(line.strip() for line in hunk.before):
            start = _locate(lines, hunk, cursor, moved, path)
            if isinstance(start, Malformed):
                return start
            stop = start + len(hunk.before)
        elif any(line.strip() for line in lines):
            return Malformed(
                MalformedKind.AMBIGUOUS,
                f"hunk {hunk.number} (for {clip(path)}) has no context or removed lines, "
                "so where it goes cannot be told; include the lines around the change",
            )
        else:
            start, stop = 0, len(lines)
        new = hunk.new_lines(lines[start:stop])
        if new and stop == len(lines) and not hunk.newline_at_end:
            new[-1] = new[-1][:-1]
        lines = [*lines[:start], *new, *lines[stop:]]
        cursor, moved = start + len(new), moved + len(new) - (stop - start)
    return lines


def edit_udiff(text: str, workspace: Workspace) -> Applied | Malformed:
    """The files the response's unified diff changes (see the module docstring)."""
    fences = regions(text, lambda line: line.startswith(("@@", "+++ ")))
    problem = cut_off(fences)
    if problem is not None:
        return problem
    patches = _read(fences)
    if isinstance(patches, Malformed):
        return patches
    if not patches:
        return Malformed(
            MalformedKind.NO_EDIT,
            "the response has no diff hunk: give '--- path' and '+++ path' lines, then "
            "hunks that start with '@@ ... @@' and mark lines with ' ', '-' or '+'",
        )
    files: dict[str, list[str]] = {}
    for patch in patches:
        path = _target(patch, workspace)
        if isinstance(path, Malformed):
            return path
        if path not in files:
            current = workspace.files.get(path)
            if current is None and any(line.strip() for h in patch.hunks for line in h.before):
                return Malformed(
                    MalformedKind.NO_MATCH,
                    f"the diff changes lines of {clip(path)}, which does not exist yet; a new "
                    "file's diff has '--- /dev/null' and only '+' lines",
                )
            files[path] = matching.split(current or "")
        patched = _patch(files[path], patch.hunks, path)
        if isinstance(patched, Malformed):
            return patched
        files[path] = patched
    return workspace.finish({path: "".join(lines) for path, lines in files.items()})


UDIFF = EditFormat("udiff", edit_udiff)
EDIT_FORMATS.register(UDIFF.name, UDIFF)
