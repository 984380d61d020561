"""How stable the calibrated time limits of program tasks are under load.

Calibrates the built-in `programs` suite (every case of every reference run
`calibration.RUNS` times in the sandbox, one worker, an empty cache each time) on the
machine as it is, then with 2 and with 4 busy loops (`python -c 'while True: pass'`)
started beside it, and under each load judges every reference by the limits
calibrated on the quiet machine, as a stored run is re-judged. Prints, for each load:
the machine's load average over the last minute once the loops were started, the
seconds calibration took, the reference's CPU seconds per case against the quiet
ones (median and largest ratio), how many cases' limits differ from the quiet ones
and by how much at most, how many limits are above the floor, and the references'
verdicts under the quiet limits.
Usage: python -m bench.calibration [BUSY ...]   (default: 0 2 4)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from codetrial.config import TIME_FACTOR, TIME_FLOOR, Limits
from codetrial.gate import get_profile
from codetrial.kinds import Asked
from codetrial.kinds.program import OUTPUT_CAP, PROGRAM
from codetrial.records import Outcome
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import ProgramTask, load_suite
from codetrial.verdict.calibration import RUNS, calibrated
from codetrial.verdict.pool import JudgePool

SETTLE_S = 1.0  # seconds the busy loops run before anything is measured


@contextmanager
def busy(loops: int) -> Iterator[None]:
    """`loops` processes spinning on a core each, for as long as the block runs."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(loops)]
    try:
        time.sleep(SETTLE_S if loops else 0)
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def limits_of(task: ProgramTask) -> dict[str, float]:
    assert task.timing is not None
    return {name: task.timing.of(name) for name, _ in task.named_cases}


def reference_s(task: ProgramTask) -> dict[str, float]:
    assert task.timing is not None
    return dict(task.timing.reference_s)


def main(loads: list[int]) -> None:
    tasks = list(load_suite("programs"))
    asked = Asked.of(get_profile("contest"), "whole", None)
    quiet: list[ProgramTask] = []
    print(
        f"{len(tasks)} problems, {sum(len(t.named_cases) for t in tasks)} cases; "
        f"{RUNS} runs a case; factor {TIME_FACTOR:g}, floor {TIME_FLOOR:g} s; "
        f"{os.cpu_count()} cores"
    )
    print(
        "| busy loops | load average | calibration, s | reference CPU vs quiet, median / max | "
        "limits changed (most) | limits above the floor | references passed under "
        "the quiet limits |"
    )
    print("|---|---|---|---|---|---|---|")
    with JudgePool(1, SandboxPolicy(Limits())) as pool:
        for loops in loads:
            with busy(loops), tempfile.TemporaryDirectory() as cache:
                os.environ["CODETRIAL_CACHE"] = cache
                load = os.getloadavg()[0]
                started = time.perf_counter()
                timed = calibrated(pool, tasks, output_cap=OUTPUT_CAP)
                seconds = time.perf_counter() - started
                quiet = quiet or timed
                verdicts = [
                    PROGRAM.check(pool, task, f"```python\n{task.reference}```", asked).result()
                    for task in quiet
                ]
            ratios, changed, most = [], 0, 0.0
            for now, then in zip(timed, quiet, strict=True):
                for name, took in reference_s(now).items():
                    ratios.append(took / reference_s(then)[name])
                for name, limit in limits_of(now).items():
                    moved = abs(limit - limits_of(then)[name])
                    changed, most = changed + (moved > 0), max(most, moved)
            above = sum(v > TIME_FLOOR for t in timed for v in limits_of(t).values())
            passed = sum(v.outcome is Outcome.PASSED for v in verdicts)
            flipped = [
                f"{task.id}: {verdict.detail}"
                for task, verdict in zip(quiet, verdicts, strict=True)
                if verdict.outcome is not Outcome.PASSED
            ]
            print(
                f"| {loops} | {load:.1f} | {seconds:.1f} | {statistics.median(ratios):.2f} / "
                f"{max(ratios):.2f} | {changed} ({most:.2f} s) | {above} | "
                f"{passed} of {len(verdicts)} |" + (f" {'; '.join(flipped)}" if flipped else "")
            )


if __name__ == "__main__":
    main([int(n) for n in sys.argv[1:]] or [0, 2, 4])
