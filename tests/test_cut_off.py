"""A reply cut off at a token limit, and a prompt too long for the context window, end
to end: through `codetrial.run` on the scripted backend (which keeps to the run's
limits, a word for a token) and the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import codetrial
from codetrial.records import AttemptRecord, Outcome
from codetrial.tasks import Task
from tests.conftest import cli, fenced


class Recorder:
    """A progress callback that keeps every stored attempt."""

    def __init__(self) -> None:
        self.records: list[AttemptRecord] = []

    def start(self, run_dir: Path, total: int) -> None:
        pass

    def advance(self, record: AttemptRecord) -> None:
        self.records.append(record)


def _script(tmp_path: Path, responses: dict[str, list[str]]) -> str:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(responses))
    return f"scripted/{script}"


def test_a_cut_off_reply_is_said_to_be_in_its_detail_feedback_and_counts(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    reference = fenced(contracts10["palindrome"].reference or "")
    rambling = "Let me think about this step by step. " * 20 + reference
    model = _script(tmp_path, {"palindrome": [rambling, reference]})
    run = codetrial.run(
        "contracts10",
        [model],
        task_ids=["palindrome"],
        runs_dir=tmp_path / "runs",
        max_tokens=60,
        efficiency=False,
    )
    first, repaired = run.attempts()
    assert (first.outcome, first.finish_reason, first.completion_tokens) == (
        Outcome.NO_CODE,
        "length",
        60,
    )
    assert first.detail.startswith("reply cut off at 60 tokens (the limit)")
    assert first.feedback is not None
    assert first.feedback.startswith("Your reply was cut off at 60 tokens (the limit);")
    assert "Your reply was cut off at 60 tokens (the limit);" in repaired.messages[-1]["content"]
    assert (repaired.outcome, repaired.finish_reason) == (Outcome.PASSED, "stop")
    assert "cut off" not in repaired.detail

    (summary,) = json.loads((run.path / "results.json").read_text())["summary"]
    assert (summary["cut_off"], summary["overflow"], summary["infra_errors"]) == (1, 0, 0)
    shown = cli("report", run.path)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    header = next(line for line in lines if "overflow" in line)
    row = next(line for line in lines[lines.index(header) :] if line.startswith("│ scripted/"))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    headers = [c.strip() for c in header.split("┃")[1:-1]]
    assert dict(zip(headers, cells, strict=True))["cut off"] == "1"
    assert "<th>cut off</th>" in (run.path / "report.html").read_text()


def test_a_prompt_too_long_is_an_overflow_counted_and_never_asked_again(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    reference = fenced(contracts10["palindrome"].reference or "")
    model = _script(tmp_path, {"palindrome": [reference]})
    watched = Recorder()
    run = codetrial.run(
        "contracts10",
        [model],
        task_ids=["palindrome"],
        runs_dir=tmp_path / "runs",
        num_ctx=30,
        efficiency=False,
        progress=watched,
    )
    (attempt,) = run.attempts()
    assert attempt.outcome is Outcome.OVERFLOW
    assert "exceed the scripted model's context window of 30" in attempt.detail
    assert attempt.feedback is None  # nothing a repair could change
    (summary,) = json.loads((run.path / "results.json").read_text())["summary"]
    assert (summary["overflow"], summary["infra_errors"], summary["first_pass"]) == (1, 0, 0)

    again = Recorder()
    resumed = codetrial.run(resume=run.path, progress=again)
    assert again.records == []
    assert [a.outcome for a in resumed.attempts()] == [Outcome.OVERFLOW]
