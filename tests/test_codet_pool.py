"""The CodeT authors' HumanEval data: 16,400 CodeGen-16B completions and the tests the
same model wrote. `codetrial select --pool` judges the pool (reproducing the authors'
pass@1 22.1 %, pass@10 50.4 %, pass@100 73.8 %, within 0.3 points) and its `codet`
strategy, fed the authors' generated tests, selects what CodeT's own script gives on
these files, 36.75 % (published, rounded: 36.7), within 0.5 points.

Three tasks (HumanEval/68, /106, /143) carry a generated test with `from ... import *`.
CodeT runs a task's tests as the body of one function, where that does not compile,
so for those tasks no candidate passes any test and CodeT picks at random; codetrial
does the same (without it, codet would select 37.24 %).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import CLI_ENV, CODETRIAL

CODET = Path(__file__).resolve().parents[2] / "shared" / "data" / "codet"
POOL = CODET / "HumanEval_codegen16B_temp0.8_topp0.95_num100_max300_code_solution.jsonl"
TESTS = CODET / "HumanEval_codegen16B_temp0.8_topp0.95_num100_max300_test_case.jsonl"
PROMPTS = CODET / "HumanEval_for_code_generation.jsonl"
TEST_PROMPTS = CODET / "HumanEval_for_test_case_generation.jsonl"
PUBLISHED = {"pass@1": 0.221, "pass@10": 0.504, "pass@100": 0.738}
SELECTED = {"random": (0.221, 0.003), "codet": (0.367, 0.005), "oracle": (0.738, 0.003)}


@pytest.mark.minutes
def test_pool_and_codet_reproduce_the_published_figures(tmp_path: Path) -> None:
    assert POOL.is_file(), f"the CodeT data is expected at {CODET} (shared/ beside the repo)"
    started = time.monotonic()
    result = subprocess.run(
        [
            CODETRIAL,
            "select",
            "--pool",
            str(POOL),
            "--suite",
            "humaneval",
            "--prompts",
            str(PROMPTS),
            "--tests",
            str(TESTS),
            "--test-prompts",
            str(TEST_PROMPTS),
            "--strategies",
            "first,random,codet,oracle",
            "--workers",
            "2",
            "--runs-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=3000,
        env=CLI_ENV,
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = tmp_path.iterdir()
    figures = json.loads((run_dir / "results.json").read_text())["pass_at_k"][0]["first"]
    for name, published in PUBLISHED.items():
        assert abs(figures[name]["value"] - published) <= 0.003, (name, figures[name])
    lines = (run_dir / "samples_results.jsonl").read_text().splitlines()
    assert len(lines) == 16_400
    (selection,) = json.loads((run_dir / "selection.json").read_text())
    picked = {s["name"]: s["estimate"]["value"] for s in selection["strategies"]}
    for name, (published, tolerance) in SELECTED.items():
        assert abs(picked[name] - published) <= tolerance, (name, picked[name])
    assert selection["tests_unusable"] == ["HumanEval/106", "HumanEval/143", "HumanEval/68"]
    print(f"16,400 CodeT samples judged and selected in {time.monotonic() - started:.0f} s")
