"""What a model is shown of a repository: the Agentless baseline's retrieval step.

There is no agent loop. The repository's Python source files at the base commit (not
its tests, which a patch may not change) are ranked by BM25 (the `rank-bm25`
package's Okapi BM25) against the issue; the top few are shown, each cut to fit the
context the run allows, and the model names the file it edits in its edit, which is
applied on the trusted side and judged as a patch against the base commit. What was
cut is said in the prompt and recorded in the run's manifest.
"""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template

from rank_bm25 import BM25Okapi

from codetrial.prompts import read_template
from codetrial.tasks import AnyTask
from codetrial.tasks.repository import RepositoryTask
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict.repository import base_archive

TOP_FILES = 3
CHARS_PER_TOKEN = 3
PROMPT_RESERVE_TOKENS = 1024
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _sources(task: RepositoryTask, repos: Path) -> dict[str, str]:
    """The base commit's Python files outside tests, as text."""
    found = {}
    with tarfile.open(fileobj=io.BytesIO(base_archive(repos, task))) as tar:
        for member in tar.getmembers():
            name = member.name
            if not member.isfile() or not name.endswith(".py") or name in task.protected_files:
                continue
            if re.search(
                r"(^|/)(tests?|testing)(/|$)|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$", name
            ):
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                try:
                    found[name] = handle.read().decode("utf-8")
                except UnicodeDecodeError:
                    continue
    return found


@dataclass(frozen=True)
class Localized:
    """What a repository task's model is shown: the view as a workspace task (the
    issue as instructions, the chosen files, cut), and a note of the cuts."""

    view: WorkspaceTask
    note: str


def _cut(text: str, room: int) -> tuple[str, int, int]:
    """`text`'s first lines that fit in `room` characters: (kept, lines kept, lines)."""
    lines = text.splitlines(keepends=True)
    kept, size = 0, 0
    while kept < len(lines) and size + len(lines[kept]) <= room:
        size += len(lines[kept])
        kept += 1
    return "".join(lines[:kept]), kept, len(lines)


def localize(task: RepositoryTask, repos: Path, num_ctx: int, max_tokens: int) -> Localized:
    """The repository task as a workspace task a model can edit: its most relevant
    files, cut so the prompt fits `num_ctx` tokens with room for `max_tokens`."""
    sources = _sources(task, repos)
    paths = sorted(sources)
    ranked: list[str] = []
    if paths:
        bm25 = BM25Okapi([_words(f"{path} {sources[path]}") for path in paths])
        scores = bm25.get_scores(_words(task.problem_statement))
        ranked = [p for _, p in sorted(zip(scores, paths, strict=True), key=lambda s: -s[0])]
    room = max(0, (num_ctx - max_tokens - PROMPT_RESERVE_TOKENS) * CHARS_PER_TOKEN)
    room -= len(task.problem_statement)
    files: list[tuple[str, str]] = []
    cuts: list[str] = []
    for path in ranked[:TOP_FILES]:
        text, kept, total = _cut(sources[path], room)
        if kept == 0:
            cuts.append(f"{path} (left out: no room)")
            continue
        room -= len(text)
        files.append((path, text))
        if kept < total:
            cuts.append(f"{path} (shown up to line {kept} of {total})")
    shown = ", ".join(p for p, _ in files) or "none"
    note = f"shown: {shown}" + (f"; cut: {'; '.join(cuts)}" if cuts else "")
    instructions = Template(read_template("repository_issue.md")).substitute(
        repo=task.repo,
        problem_statement=task.problem_statement.strip(),
        cuts=f"Cut to fit: {'; '.join(cuts)}." if cuts else "",
    )
    view = WorkspaceTask(
        id=task.id, suite=task.suite, instructions=instructions, files=tuple(files),
        editable=tuple(p for p, _ in files), tests=(),
    )  # fmt: skip
    return Localized(view, note)


def views(
    tasks: Sequence[AnyTask], repos: Path | None, num_ctx: int, max_tokens: int
) -> dict[str, Localized]:
    """Each repository task's view, by task id."""
    return {
        t.id: localize(t, repos, num_ctx, max_tokens)
        for t in tasks if isinstance(t, RepositoryTask) and repos is not None
    }  # fmt: skip
