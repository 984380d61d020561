"""The queue for a person: what a run's models still fail after repair, written for a
person to read, and a person's decisions recorded beside the run's verdicts, on real
scripted runs, sandboxes and stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import codetrial
from codetrial.errors import ConfigError
from codetrial.tasks import Task
from codetrial.tasks.workspace import load_exercism
from tests.conftest import POLYGLOT, cli, fenced

WRONG = "def {name}(*args, **kwargs):\n    return None\n"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_queue_holds_what_still_fails_and_decisions_never_change_a_verdict(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    palindrome, two_sum = contracts10["palindrome"], contracts10["two_sum"]
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "palindrome": [
                    fenced(WRONG.format(name=palindrome.entry_point)),
                    fenced(palindrome.reference or ""),
                ],
                "two_sum": [fenced(WRONG.format(name=two_sum.entry_point))],
            }
        )
    )
    model = f"scripted/{script}"
    run = codetrial.run(
        "contracts10",
        [model],
        task_ids=["palindrome", "two_sum", "merge_intervals"],  # the last: no response
        runs_dir=tmp_path / "runs",
    )
    outcomes = {r["task_id"]: (r["outcome"], r["outcome_after_repair"]) for r in run.table()}
    assert outcomes == {
        "palindrome": ("failed", "passed"),
        "two_sum": ("failed", "failed"),
        "merge_intervals": ("infra_error", "infra_error"),
    }
    stored = [a.model_dump() for a in run.attempts()]
    results_before = json.loads((run.path / "results.json").read_text())["tasks"]

    listed = cli("review", run.path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "two_sum" in listed.stdout and "palindrome" not in listed.stdout
    assert "left out: 1 (every try an infra_error)" in listed.stdout
    (item,) = _lines(run.path / "review" / "queue.jsonl")
    assert (item["model"], item["task_id"], item["sample"], item["kind"]) == (
        model,
        "two_sum",
        0,
        "function",
    )
    assert item["asked"] == two_sum.spec
    assert item["outcomes"] == ["failed", "failed"]
    last = item["last"]
    assert last["attempt"] == 1 and last["outcome"] == "failed"
    assert last["code"] == WRONG.format(name=two_sum.entry_point)
    assert last["files"] is None and last["patch"] is None and last["changes"] is None
    assert last["failed_tests"] and all("(visible, " in t for t in last["failed_tests"])
    assert "assert" in last["visible_output"] and last["feedback"]
    page = (run.path / "review" / "queue.md").read_text()
    assert "## two_sum · " in page and "palindrome" not in page
    assert "1 more left out, every try an infra_error" in page
    assert two_sum.spec.splitlines()[0] in page and "return None" in page
    assert f"--decide two_sum --model {model} --sample 0 --accept`" in page
    report = (run.path / "report.html").read_text()
    assert "Needs a person" in report and 'href="review/queue.md"' in report
    assert "undecided" in report

    refused = cli("review", run.path, "--decide", "palindrome", "--model", model, "--accept")
    assert refused.returncode == 2 and "not in the review queue" in refused.stderr
    assert "two_sum" in refused.stderr  # what the queue holds
    with pytest.raises(ConfigError, match="not in the review queue"):
        codetrial.decide(run.path, "merge_intervals", model=model, accept=False)
    with pytest.raises(ConfigError, match="not in the review queue"):
        codetrial.decide(run.path, "two_sum", model=model, sample=1, accept=False)
    unpaired = cli("review", run.path, "--decide", "two_sum", "--reject")
    assert unpaired.returncode == 2 and "needs --model" in unpaired.stderr
    assert not (run.path / "review" / "decisions.jsonl").exists()

    accepted = codetrial.decide(run.path, "two_sum", model=model, accept=True, by="lee")
    assert accepted.decision == "accept" and accepted.by == "lee"
    rejected = cli(
        "review",
        run.path,
        "--decide",
        "two_sum",
        "--model",
        model,
        "--reject",
        "--note",
        "returns None for every input",
        "--by",
        "ana",
    )
    assert rejected.returncode == 0, rejected.stdout + rejected.stderr
    assert "reject: two_sum" in rejected.stdout
    decisions = _lines(run.path / "review" / "decisions.jsonl")
    assert [(d["decision"], d["by"]) for d in decisions] == [("accept", "lee"), ("reject", "ana")]
    assert decisions[1]["note"] == "returns None for every input" and decisions[1]["at"]
    report = (run.path / "report.html").read_text()
    assert 'class="decision-reject">reject' in report and "returns None for every input" in report
    assert "decision-accept" not in report and "undecided" not in report  # the latest counts

    assert [a.model_dump() for a in codetrial.open_run(run.path).attempts()] == stored
    codetrial.open_run(run.path).report()
    assert json.loads((run.path / "results.json").read_text())["tasks"] == results_before


def test_a_workspace_task_s_queue_item_shows_its_files_and_their_changes(tmp_path: Path) -> None:
    (react,) = [t for t in load_exercism(POLYGLOT, "polyglot-python") if t.id == "react"]
    broken = "react.py\n```python\nclass InputCell:\n    pass\n```\n"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"supplied files: react.py\n": [broken], "Fix the code": [broken]})
    )
    run = codetrial.run(
        "polyglot-python",
        [f"scripted/{script}"],
        data=POLYGLOT,
        edit_format="whole",
        task_ids=["react"],
        runs_dir=tmp_path / "runs",
    )
    queue = codetrial.review(run)
    (item,) = queue.items
    assert queue.left_out == 0 and item.kind == "workspace"
    assert item.asked == react.instructions
    assert item.last.files == {"react.py": "class InputCell:\n    pass\n"}
    assert item.changes is not None
    assert (
        item.changes.startswith("--- a/react.py\n+++ b/react.py\n")
        and "+    pass\n" in item.changes
    )
    (written,) = _lines(queue.folder / "queue.jsonl")
    assert written["last"]["files"] == item.last.files
    assert written["last"]["changes"] == item.changes
    page = (queue.folder / "queue.md").read_text()
    assert "#### Changes to the files" in page and "```diff" in page
