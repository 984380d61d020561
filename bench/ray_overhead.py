"""What judging on a Ray cluster costs against judging here, with the same number of
sandboxes, in one run on one machine.

`codetrial evaluate` judges each file twice: locally with `--workers 2`, and sharded
over a local Ray cluster of a head node and a worker node (one CPU each, both on
127.0.0.1) with `--workers 1` per node. The cluster is started once, before the
timings, as a team's cluster would be running already; each timing is the whole
command in its own process, from start to exit, so it includes connecting to the
cluster and starting an actor with a sandbox pool on each node. The files: the
1,640-sample HumanEval file of the other benchmarks (164 tasks x 5 canonical + 5
broken) and, with `--pool`, CodeT's 16,400-sample pool from `../shared/data/codet`.
Prints the median wall time of `--repeat` runs, the ratio Ray / local, whether every
verdict agrees, and the load average before and after.

Usage: python -m bench.ray_overhead [--repeat 3] [--pool]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.humaneval_vs_official import MIX
from bench.ray_cluster import RAY_ENV, LocalCluster
from bench.samples import write_samples
from codetrial.tasks import load_suite

CODET = Path(__file__).resolve().parents[2] / "shared" / "data" / "codet"
POOL = CODET / "HumanEval_codegen16B_temp0.8_topp0.95_num100_max300_code_solution.jsonl"
PROMPTS = CODET / "HumanEval_for_code_generation.jsonl"


def judged(samples: Path, runs: Path, extra: list[str]) -> tuple[float, list[str]]:
    """Wall seconds of one `codetrial evaluate`, and every sample's outcome."""
    codetrial = str(Path(sys.executable).with_name("codetrial"))
    argv = [
        codetrial,
        "evaluate",
        str(samples),
        "--suite",
        "humaneval",
        "--no-efficiency",
        "--runs-dir",
        str(runs),
        *extra,
    ]
    started = time.perf_counter()
    subprocess.run(
        argv,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **RAY_ENV},
    )
    seconds = time.perf_counter() - started
    run_dir = max(runs.iterdir(), key=lambda p: p.stat().st_mtime)
    lines = (run_dir / "samples_results.jsonl").read_text().splitlines()
    return seconds, [json.loads(line)["outcome"] for line in lines]


def compare(
    name: str, samples: Path, extra: list[str], address: str, repeat: int, folder: Path
) -> None:
    times: dict[str, list[float]] = {"local": [], "ray": []}
    differ = count = 0
    for _ in range(repeat):
        local_s, here = judged(samples, folder / "local", ["--workers", "2", *extra])
        ray_s, there = judged(samples, folder / "ray", ["--workers", "1", "--ray", address, *extra])
        times["local"].append(local_s)
        times["ray"].append(ray_s)
        differ += sum(a != b for a, b in zip(here, there, strict=True))
        count = len(here)
    local, ray = statistics.median(times["local"]), statistics.median(times["ray"])
    print(f"{name}: {count} samples, median of {repeat}")
    print(f"  local, 2 sandboxes               {local:7.2f} s  {count / local:7.1f}/s")
    print(f"  Ray, 2 nodes x 1 sandbox         {ray:7.2f} s  {count / ray:7.1f}/s")
    print(
        f"  Ray / local                      {ray / local:7.2f}x   "
        f"verdicts differ on {differ} of {count * repeat}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pool", action="store_true", help="also CodeT's 16,400 samples")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="codetrial-bench-"))
    samples = folder / "samples.jsonl"
    write_samples(samples, [(task, variant) for task in load_suite("humaneval") for variant in MIX])
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cluster = LocalCluster()
    try:
        compare("HumanEval file", samples, [], cluster.address, args.repeat, folder / "he")
        if args.pool:
            compare(
                "CodeT pool",
                POOL,
                ["--prompts", str(PROMPTS)],
                cluster.address,
                args.repeat,
                folder / "pool",
            )
    finally:
        cluster.shutdown()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
