"""Seconds per exercise for the two ways a workspace's tests run, in one run on one
machine: every polyglot-python reference solution, judged

  apart    the tests in a sandbox of their own, reaching the candidate's modules in
           another only through requests (trust level trusted-side)
  beside   the tests in the candidate's own process, with sentinel tests planted
           (trust level in-sandbox)

in turn, REPEATS times each, after one warm-up round. Prints per exercise the median
seconds of each and their ratio, then the median and worst ratio over the exercises
(paasio, whose tests read their callers' frames, runs beside only: it is left out).
Usage:
python -m bench.workspace_runners [POLYGLOT_DIR] [REPEATS]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from codetrial.config import Limits
from codetrial.records import Outcome
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks.workspace import WorkspaceTask, load_exercism
from codetrial.verdict.workspace import judge_workspace

LIMITS = Limits(timeout_s=60, cpu_s=30)
POLYGLOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "polyglot-python"


def _seconds(task: WorkspaceTask, box: Sandbox, beside: bool) -> float:
    files = dict(task.reference)
    started = time.perf_counter()
    verdict = judge_workspace(files, task, box, LIMITS, beside=beside)
    took = time.perf_counter() - started
    if verdict.outcome is not Outcome.PASSED:
        raise SystemExit(f"{task.id}'s reference did not pass ({verdict.detail})")
    return took


def main(folder: Path, repeats: int) -> None:
    tasks = [t for t in load_exercism(folder, "polyglot-python") if t.trust == "trusted-side"]
    box = open_sandbox(SandboxPolicy(LIMITS))
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'exercise':26} {'apart s':>8} {'beside s':>8} {'ratio':>6}")
    ratios, totals = [], {"apart": 0.0, "beside": 0.0}
    try:
        for task in tasks:
            _seconds(task, box, beside=False)
            _seconds(task, box, beside=True)
            samples: dict[str, list[float]] = {"apart": [], "beside": []}
            for _ in range(repeats):
                samples["apart"].append(_seconds(task, box, beside=False))
                samples["beside"].append(_seconds(task, box, beside=True))
            apart, beside = (statistics.median(samples[k]) for k in ("apart", "beside"))
            totals["apart"] += apart
            totals["beside"] += beside
            ratios.append((apart / beside, task.id))
            print(f"{task.id:26} {apart:8.3f} {beside:8.3f} {apart / beside:6.2f}", flush=True)
    finally:
        box.close()
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    median = statistics.median(ratio for ratio, _ in ratios)
    worst, name = max(ratios)
    print(
        f"{len(tasks)} exercises: apart/beside median {median:.2f}x, worst {worst:.2f}x "
        f"({name}); totals {totals['apart']:.2f} s apart, {totals['beside']:.2f} s beside"
    )


if __name__ == "__main__":
    main(
        Path(sys.argv[1]) if len(sys.argv) > 1 else POLYGLOT,
        int(sys.argv[2]) if len(sys.argv) > 2 else 5,
    )
