"""`--json`: one JSON document on standard output, the same data as the file the
command writes, and the exit codes docs/run-directory.md documents."""

from __future__ import annotations

import json
from pathlib import Path

from codetrial.tasks import Task
from tests.conftest import cli, fenced


def _document(stdout: str) -> object:
    return json.loads(stdout)


def test_run_evaluate_select_and_compare_print_one_document(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    palindrome = contracts10["palindrome"]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"palindrome": [fenced(palindrome.reference or "")]}))
    runs = tmp_path / "runs"
    ran = cli(
        "run", "--model", f"scripted/{script}", "--task", "palindrome", "--runs-dir", runs, "--json"
    )
    assert ran.returncode == 0, ran.stderr
    (run_dir,) = runs.iterdir()
    assert _document(ran.stdout) == json.loads((run_dir / "results.json").read_text())
    assert f"run directory: {run_dir}" in " ".join(ran.stderr.split())

    samples = tmp_path / "samples.jsonl"
    lines = [
        {"task_id": "palindrome", "solution": palindrome.reference},
        {"task_id": "palindrome", "solution": "def is_palindrome(s):\n    return True\n"},
    ]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    judged = cli("evaluate", samples, "--suite", "contracts10", "--runs-dir", runs, "--json")
    assert judged.returncode == 0, judged.stderr
    document = _document(judged.stdout)
    assert isinstance(document, dict)
    evaluated = runs / document["manifest"]["run_id"]
    assert document == json.loads((evaluated / "results.json").read_text())
    assert [t["first_passed"] for t in document["tasks"]] == [True, False]

    chosen = cli("select", evaluated, "--strategies", "random,first,oracle", "--json")
    assert chosen.returncode == 0, chosen.stderr
    assert _document(chosen.stdout) == json.loads((evaluated / "selection.json").read_text())

    compared = cli("compare", evaluated, run_dir, "--out", tmp_path / "c.html", "--json")
    assert compared.returncode == 0, compared.stderr
    comparison = _document(compared.stdout)
    assert isinstance(comparison, dict)
    assert comparison["tasks"] == 1 and comparison["mcnemar_exact_p"] == 1.0


def test_errors_keep_their_exit_codes_and_leave_standard_output_empty(tmp_path: Path) -> None:
    unknown = cli(
        "run", "--model", "scripted/x.json", "--task", "nope", "--runs-dir", tmp_path, "--json"
    )
    assert unknown.returncode == 3 and unknown.stdout == ""
    assert "nope" in unknown.stderr
    not_a_run = cli("compare", tmp_path, tmp_path, "--json")
    assert not_a_run.returncode == 7 and not_a_run.stdout == ""
