"""What a model is shown of a repository: the Agentless baseline's retrieval step.

There is no agent loop. Retrieval narrows the repository twice, with BM25 (the
`rank-bm25` package's Okapi BM25) against the issue's words: first to the few Python
source files at the base commit that score highest (never its tests, which a patch
may not change), then, inside those files, to the top-level definitions (a class's
methods, for a large class) that score highest, as many as the context the run
allows holds. Each file is shown with what was left out replaced by a marker line
that the model must keep; the model names the file it edits in its edit. The edited
excerpt is put back together with the lines behind its markers, so the candidate is
an exact patch of whole files against the base commit. What was shown and cut is
said in the prompt and recorded in the run's manifest.
"""

from __future__ import annotations

import ast
import io
import re
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template

from codetrial.config import RunConfig
from codetrial.edits import EditFormat
from codetrial.errors import ConfigError
from codetrial.extras import require
from codetrial.gate.scan import is_test_file
from codetrial.prompts import read_template
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.syntax import parse
from codetrial.tasks import RepositoryTask
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict import FEEDBACK_CHARS
from codetrial.verdict.repository import base_archive
from codetrial.verdict.workspace import apply_edit, changes

TOP_FILES = 3
CHARS_PER_TOKEN = 3
PROMPT_RESERVE_TOKENS = 1024
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")
MARKER = "# ... lines {start}-{end} not shown: keep this line as it is ..."
_MARKER = re.compile(
    r"^[ \t]*# \.\.\. lines (\d+)-(\d+) not shown: keep this line as it is \.\.\.$"
)


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _sources(task: RepositoryTask, repos: Path) -> dict[str, str]:
    """The base commit's Python files outside tests, as text."""
    found = {}
    with tarfile.open(fileobj=io.BytesIO(base_archive(repos, task))) as tar:
        for member in tar.getmembers():
            name = member.name
            if not member.isfile() or not name.endswith(".py") or is_test_file(name):
                continue
            if (handle := tar.extractfile(member)) is not None:
                try:
                    found[name] = handle.read().decode("utf-8")
                except UnicodeDecodeError:
                    continue
    return found


def _ranked(documents: Sequence[str], query: str) -> list[int]:
    """Indexes of `documents`, best match for `query` first."""
    bm25 = require("rank_bm25", "rank-bm25", "repositories", "retrieval for repository tasks")
    scores = bm25.BM25Okapi([_words(d) or ["_"] for d in documents]).get_scores(_words(query))
    return sorted(range(len(documents)), key=lambda i: -scores[i])


def _chunks(text: str, largest: int) -> list[tuple[int, int]]:
    """1-based inclusive line ranges that tile `text`: what comes before the first
    definition, then each top-level definition (with its decorators and what follows
    it up to the next); a class longer than `largest` characters is split the same way
    by its methods. A file that does not parse is one range."""
    lines = text.splitlines(keepends=True)
    try:
        tree = parse(text)
    except SyntaxError:
        return [(1, len(lines))] if lines else []
    return _tile(tree.body, 1, len(lines), lines, largest)


def _tile(
    body: list[ast.stmt], first: int, last: int, lines: list[str], largest: int
) -> list[tuple[int, int]]:
    starts = [
        min([node.lineno, *(d.lineno for d in node.decorator_list)])
        for node in body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    bounds = sorted({first, *(s for s in starts if first < s <= last)})
    ranges = []
    for index, start in enumerate(bounds):
        end = bounds[index + 1] - 1 if index + 1 < len(bounds) else last
        node = next(
            (
                n
                for n in body
                if isinstance(n, ast.ClassDef) and n.lineno >= start and n.lineno <= end
            ),
            None,
        )
        size = sum(len(line) for line in lines[start - 1 : end])
        if node is not None and size > largest and len(node.body) > 1:
            ranges.extend(_tile(node.body, start, end, lines, largest))
        else:
            ranges.append((start, end))
    return ranges


@dataclass(frozen=True)
class Localized:
    """What a repository task's model is shown: the view as a workspace task (the
    issue as instructions, the chosen excerpts of files), the files whole as the base
    commit has them, and a note of what was shown and cut."""

    view: WorkspaceTask
    originals: Mapping[str, str]
    note: str

    def candidate(
        self, response: str, edit_format: EditFormat, workspace: Mapping[str, str] | None
    ) -> tuple[Candidate, Verdict | None]:
        """The response's edit applied to the excerpts (as `workspace`, the last try,
        left them), as a candidate whose patch is what it makes of the whole files;
        with a malformed_edit verdict when it cannot be applied or expanded."""
        files, malformed = apply_edit(response, self.view, edit_format, workspace)
        whole = self.expand(files)
        if isinstance(whole, str):
            message = f"The edit could not be applied: {whole}"
            malformed = Verdict(Outcome.MALFORMED_EDIT, gate=None, detail=message, feedback=message)
            whole = dict(self.originals)
        return Candidate(response, None, files, changes(dict(self.originals), whole)), malformed

    def expand(self, files: Mapping[str, str]) -> dict[str, str] | str:
        """The whole files that edited excerpts stand for, each marker line replaced by
        the lines it stands for; a message instead when an edit changed, removed,
        moved or repeated a marker line."""
        shown = dict(self.view.files)
        whole = {}
        for path, text in files.items():
            if _spans(text) != _spans(shown[path]):
                return f"{path}: a line that stands for lines not shown was changed or removed"
            original = self.originals[path].splitlines(keepends=True)
            out: list[str] = []
            for line in text.splitlines(keepends=True):
                match = _MARKER.match(line.rstrip("\n"))
                if match is None:
                    out.append(line)
                else:
                    out.extend(original[int(match.group(1)) - 1 : int(match.group(2))])
            whole[path] = "".join(out)
        return whole


def _spans(text: str) -> list[tuple[int, int]]:
    """The line ranges that a text's marker lines stand for, in order."""
    found = (_MARKER.match(line) for line in text.splitlines())
    return [(int(m.group(1)), int(m.group(2))) for m in found if m]


def _excerpt(text: str, chosen: list[tuple[int, int]]) -> str:
    """`text` with the lines outside `chosen` ranges replaced by marker lines."""
    lines = text.splitlines(keepends=True)
    keep = {n for start, end in chosen for n in range(start, end + 1)}
    out, line = [], 1
    while line <= len(lines):
        if line in keep:
            out.append(lines[line - 1])
            line += 1
            continue
        end = line
        while end + 1 <= len(lines) and end + 1 not in keep:
            end += 1
        out.append(MARKER.format(start=line, end=end) + "\n")
        line = end + 1
    return "".join(out)


def localize(
    task: RepositoryTask, repos: Path, num_ctx: int, max_tokens: int, tries: int = 1
) -> Localized:
    """The repository task as a workspace task a model can edit: excerpts of its most
    relevant files that fit `num_ctx` tokens on every one of `tries`. A later try's
    prompt holds the files once more, the earlier answers (up to `max_tokens` each) and
    the test output they got (up to FEEDBACK_CHARS), as aider's protocol has it."""
    sources = _sources(task, repos)
    paths = sorted(sources)
    top = [paths[i] for i in _ranked([f"{p} {sources[p]}" for p in paths], task.problem_statement)]
    top = top[:TOP_FILES]
    room = (num_ctx - tries * max_tokens - PROMPT_RESERVE_TOKENS) * CHARS_PER_TOKEN
    room -= len(task.problem_statement) + (tries - 1) * FEEDBACK_CHARS
    if room <= 0:
        raise ConfigError(
            f"--num-ctx {num_ctx} leaves no room for the repository's files beside the issue "
            f"and {tries} answer(s) of --max-tokens {max_tokens} with their test output: "
            "raise --num-ctx, or lower --max-tokens or --tries"
        )
    pieces = [(path, span) for path in top for span in _chunks(sources[path], room // 2)]
    texts = ["".join(sources[p].splitlines(keepends=True)[s - 1 : e]) for p, (s, e) in pieces]
    chosen: dict[str, list[tuple[int, int]]] = {}
    for index in (
        _ranked(
            [f"{p} {t}" for (p, _), t in zip(pieces, texts, strict=True)], task.problem_statement
        )
        if pieces
        else []
    ):
        cost = len(texts[index]) + len(MARKER) + 20
        if cost <= room:
            room -= cost
            path, span = pieces[index]
            chosen.setdefault(path, []).append(span)
    files, notes = [], []
    for path in top:
        spans = sorted(chosen.get(path, []))
        if not spans:
            notes.append(f"{path} (left out: no room)")
            continue
        excerpt = _excerpt(sources[path], spans)
        files.append((path, excerpt))
        total = len(sources[path].splitlines())
        shown = sum(end - start + 1 for start, end in spans)
        if shown < total:
            notes.append(f"{path} ({shown} of {total} lines shown)")
    note = f"shown: {', '.join(p for p, _ in files) or 'none'}"
    note += f"; cut: {'; '.join(notes)}" if notes else ""
    instructions = Template(read_template("repository_issue.md")).substitute(
        repo=task.repo,
        problem_statement=task.problem_statement.strip(),
        cuts=f"Cut to fit: {'; '.join(notes)}." if notes else "",
    )
    view = WorkspaceTask(
        id=task.id,
        suite=task.suite,
        instructions=instructions,
        files=tuple(files),
        editable=tuple(p for p, _ in files),
        tests=(),
    )
    return Localized(view, {path: sources[path] for path, _ in files}, note)


def views(tasks: Sequence[RepositoryTask], config: RunConfig) -> dict[str, Localized]:
    """Each repository task's view under a run's conditions, by task id (none without
    the run's repositories)."""
    if config.repos is None:
        return {}
    tries = config.repair_attempts + 1
    return {
        t.id: localize(t, config.repos, config.num_ctx, config.max_tokens, tries) for t in tasks
    }
