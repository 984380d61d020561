"""A queue for a person: the tasks a run's models still fail after the repair cap,
written where a person reads them, and the decisions a person records about them.

`RUN_DIR/review/queue.jsonl` holds one item a line and `queue.md` the same items as
one page; `decisions.jsonl` gathers what a person decided, one line each, the latest
line about an item counting. A decision is the person's word beside the run's: it
never changes a verdict or a stored attempt.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from codetrial.errors import ConfigError
from codetrial.kinds import kind_of, stored_tasks
from codetrial.prompts.messages import fenced
from codetrial.records import AttemptRecord, Outcome, TaskResult, TestOutcome
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic
from codetrial.store.manifest import now
from codetrial.verdict.workspace import changes

REVIEW = "review"
QUEUE = "queue.jsonl"
QUEUE_PAGE = "queue.md"
DECISIONS = "decisions.jsonl"

Key = tuple[str, str, int]  # model (with its mode), task id, sample


def _key(result: TaskResult) -> Key:
    return result.model, result.task_id, result.sample


def unresolved(results: Iterable[TaskResult]) -> tuple[list[TaskResult], int]:
    """The results whose final attempt did not pass, and how many more did not whose
    every attempt was an infra_error, which says nothing about the model."""
    failing = [r for r in results if not r.final.passed]
    kept = [r for r in failing if any(a.outcome is not Outcome.INFRA_ERROR for a in r.attempts)]
    return kept, len(failing) - len(kept)


@dataclass(frozen=True)
class Decision:
    """What a person decided about one queued item: `decision` is "accept" or
    "reject", `by` who and `at` when (UTC, ISO 8601)."""

    model: str
    task_id: str
    sample: int
    decision: str
    by: str
    at: str
    note: str = ""

    @property
    def key(self) -> Key:
        return self.model, self.task_id, self.sample


@dataclass(frozen=True)
class QueueItem:
    """One (model, task, sample) that still fails after repair: what was asked, the
    outcome of every try, and the last try whole (its code, files and their changes,
    or patch; its failure, test output and feedback)."""

    model: str
    task_id: str
    sample: int
    kind: str
    asked: str
    outcomes: list[str]
    last: AttemptRecord
    changes: str | None  # a workspace's last files against the task's starting files

    def as_dict(self) -> dict[str, Any]:
        last = self.last
        return {
            "model": self.model,
            "task_id": self.task_id,
            "sample": self.sample,
            "kind": self.kind,
            "asked": self.asked,
            "outcomes": self.outcomes,
            "last": {
                "attempt": last.attempt,
                "outcome": last.outcome.value,
                "detail": last.detail,
                "failed_tests": _failed_tests(last),
                "visible_output": last.visible_output,
                "feedback": last.feedback,
                "code": last.code,
                "files": last.files,
                "changes": self.changes,
                "patch": last.patch,
            },
        }


def _failed_tests(record: AttemptRecord) -> list[str]:
    return [
        f"{t.name} ({t.visibility.value}, {t.outcome.value})"
        for t in record.tests
        if t.outcome is not TestOutcome.PASSED
    ]


@dataclass(frozen=True)
class Queue:
    """A run's review queue as written: its items, how many failing results were
    `left_out` (every try an infra_error), and the folder it was written to."""

    items: list[QueueItem]
    left_out: int
    folder: Path


def write_queue(store: RunStore, results: Iterable[TaskResult]) -> Queue:
    """The review queue of the run open in `store`, whose `results` they are, written
    to its review folder; the tasks are loaded again (a ConfigError when they changed
    since the run)."""
    manifest, run_dir = store.manifest, store.run_dir
    failing, left_out = unresolved(results)
    tasks = {t.id: t for t in stored_tasks(manifest.config, manifest.task_sha256, run_dir)}
    items = []
    for result in failing:
        task, last = tasks[result.task_id], result.final
        start = manifest.workspaces.get(result.task_id)
        items.append(
            QueueItem(
                model=result.model,
                task_id=result.task_id,
                sample=result.sample,
                kind=task.kind,
                asked=kind_of(task).asked_text(task),
                outcomes=[a.outcome.value for a in result.attempts],
                last=last,
                changes=None if last.files is None or start is None else changes(start, last.files),
            )
        )
    folder = run_dir / REVIEW
    lines = (json.dumps(item.as_dict()) + "\n" for item in items)
    write_atomic(folder / QUEUE, "".join(lines))
    write_atomic(folder / QUEUE_PAGE, queue_page(manifest.run_id, run_dir, items, left_out))
    return Queue(items, left_out, folder)


def _fenced(text: str, language: str = "text") -> str:
    """`text` in a fenced block whose fence no run of backticks in it can close."""
    return fenced(text, language) + "\n"


def queue_page(run_id: str, run_dir: Path, items: Sequence[QueueItem], left_out: int) -> str:
    """The queue as one Markdown page, a section per item."""
    parts = [
        f"# Needs a person: {run_id}\n",
        f"{len(items)} task(s) still fail after repair"
        + (f"; {left_out} more left out, every try an infra_error" if left_out else "")
        + ". Each section ends with the command that records a person's decision "
        "(`--accept` or `--reject`, with `--note TEXT` to say why); no verdict changes.\n",
    ]
    for item in items:
        last = item.last
        parts += [
            f"## {item.task_id} · {item.model} · sample {item.sample}\n",
            f"Tries: {' → '.join(item.outcomes)}. Kind: {item.kind}.\n",
            "### What was asked\n",
            _fenced(item.asked, "markdown"),
            f"### The last try (try {last.attempt + 1}): {last.outcome.value}\n",
        ]
        if last.detail:
            parts.append(_fenced(last.detail))
        if failed := _failed_tests(last):
            parts.append("Tests not passed: " + ", ".join(f"`{t}`" for t in failed) + ".\n")
        if last.code is not None:
            parts += ["#### Code\n", _fenced(last.code, "python")]
        if item.changes is not None:
            parts += ["#### Changes to the files\n", _fenced(item.changes, "diff")]
        if last.patch is not None:
            parts += ["#### Patch\n", _fenced(last.patch, "diff")]
        if last.visible_output:
            parts += ["#### Test output\n", _fenced(last.visible_output)]
        if last.feedback and last.feedback != last.visible_output:
            parts += ["#### Feedback\n", _fenced(last.feedback)]
        command = ["codetrial", "review", str(run_dir), "--decide", item.task_id]
        command += ["--model", item.model, "--sample", str(item.sample), "--accept"]
        parts.append(f"Decide: `{shlex.join(command)}`\n")
    return "\n".join(parts)


def record_decision(
    run_dir: Path,
    results: Iterable[TaskResult],
    task_id: str,
    *,
    model: str,
    sample: int,
    accept: bool,
    by: str,
    note: str = "",
) -> Decision:
    """A person's decision about a queued item, appended to the decisions of the run
    in `run_dir`, whose `results` they are; a ConfigError when the item is not one the
    run's models still fail after repair."""
    failing, _ = unresolved(results)
    queued = {_key(r) for r in failing}
    if (model, task_id, sample) not in queued:
        held = ", ".join(f"{t} ({m}, sample {s})" for m, t, s in sorted(queued)) or "nothing"
        raise ConfigError(
            f"task {task_id!r} of model {model!r}, sample {sample}, is not in the review "
            f"queue of {run_dir} (it passed, was not run, or only met infra errors); "
            f"the queue holds: {held}"
        )
    decision = Decision(model, task_id, sample, "accept" if accept else "reject", by, now(), note)
    folder = run_dir / REVIEW
    folder.mkdir(exist_ok=True)
    with (folder / DECISIONS).open("a", encoding="utf-8") as out:
        out.write(json.dumps(asdict(decision)) + "\n")
    return decision


def latest_decisions(run_dir: Path) -> dict[Key, Decision]:
    """The latest decision about each item, from the run's decisions (none when there
    are none; a line that is not a decision is passed over)."""
    path = run_dir / REVIEW / DECISIONS
    if not path.is_file():
        return {}
    latest: dict[Key, Decision] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            decision = Decision(**json.loads(line))
        except (ValueError, TypeError):
            continue
        latest[decision.key] = decision
    return latest


def needs_a_person(run_dir: Path, results: Iterable[TaskResult]) -> dict[str, Any]:
    """What the report's "needs a person" section shows: each unresolved result with
    its last outcome and latest decision, how many were left out, and the queue page's
    link relative to the report when it has been written."""
    failing, left_out = unresolved(results)
    decided: Mapping[Key, Decision] = latest_decisions(run_dir)
    page = run_dir / REVIEW / QUEUE_PAGE
    return {
        "items": [
            {
                "model": r.model,
                "task_id": r.task_id,
                "sample": r.sample,
                "outcome": r.final.outcome.value,
                "decision": decided.get(_key(r)),
            }
            for r in failing
        ],
        "left_out": left_out,
        "page": f"{REVIEW}/{QUEUE_PAGE}" if page.is_file() else None,
    }
