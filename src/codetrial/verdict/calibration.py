"""Time limits of program tasks calibrated from their references, as EvalPlus sets
its limits: each case of a task with a reference may take

    max(floor, factor x the reference's CPU seconds on that case)

CPU seconds (TIME_FLOOR and TIME_FACTOR by default, a run's own recorded in its
configuration), unless the problem states its own limit, which is kept. A task with
neither keeps the default limit.

The reference's CPU seconds are those of its whole process (the interpreter's start
included, as a candidate's are), measured in the run's sandbox: each case run RUNS
times, the most it took kept. CPU time, not wall time: a busy machine slows a program
down without adding much to the CPU time it uses. They are measured once per machine
and kept in the cache (`cache_dir()/calibration`), one file per task, reference,
interpreter, sandbox and machine: another run on this machine, whatever its floor and
factor, measures nothing again. A run keeps the limits it judges by in its manifest
(`time_limits`), so that resuming it or re-judging it (`codetrial rerun`) judges by the
same limits on any machine, without measuring again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import platform
import sys
from collections.abc import Sequence
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path

from codetrial.config import TIME_FACTOR, TIME_FLOOR, Limits, cache_dir
from codetrial.sandbox import Sandbox
from codetrial.tasks.programs import DEFAULT_CPU_S, ProgramTask, Timing
from codetrial.verdict.pool import JudgePool, settled

RUNS = 3  # runs of the reference on each case; the most CPU time of them is kept
MEASURED_CPU_S, MEASURED_WALL_S = 10, 30.0  # the limits the reference is measured under
VERSION = 1  # of how the reference is measured: a change measures again

_Measured = dict[str, float] | str  # case name -> CPU seconds, or why it could not be


def machine(isolation: str) -> dict[str, str]:
    """What a measurement holds for: the interpreter, the sandbox, the machine."""
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "isolation": isolation,
        "host": platform.node(),
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
    }


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor()


def calibrated(
    pool: JudgePool,
    tasks: Sequence[ProgramTask],
    *,
    factor: float = TIME_FACTOR,
    floor: float = TIME_FLOOR,
    output_cap: int,
) -> list[ProgramTask]:
    """`tasks`, each with the timing a run judges it by: its stated limit, the limits
    calibrated from its reference (measured here unless the cache holds them), or
    the default. A reference that does not finish a case keeps the default, saying
    why."""
    facts = machine(pool.isolation)
    pending: dict[str, Future[_Measured]] = {}
    for task in tasks:
        if task.cpu_s is None and task.reference is not None:
            path = _path(task, facts)
            kept = _cached(task, path)
            pending[task.id] = (
                settled(kept) if kept else _measuring(pool, task, path, facts, output_cap)
            )
    timed = []
    for task in tasks:
        measured = pending[task.id].result() if task.id in pending else None
        timed.append(dataclasses.replace(task, timing=_timing(task, measured, factor, floor)))
    return timed


def _timing(task: ProgramTask, measured: _Measured | None, factor: float, floor: float) -> Timing:
    if isinstance(measured, dict):
        names = [name for name, _ in task.named_cases]
        limits = tuple((name, _up(max(floor, factor * measured[name]))) for name in names)
        return Timing("calibrated", limits, tuple((name, measured[name]) for name in names))
    how = "stated" if task.cpu_s is not None else "default"
    return Timing(how, float(task.cpu_s or DEFAULT_CPU_S), why=measured or "")


def _up(seconds: float) -> float:
    """`seconds` rounded up to the hundredth."""
    return math.ceil(round(seconds * 100, 6)) / 100


def _measuring(
    pool: JudgePool, task: ProgramTask, path: Path, facts: dict[str, str], output_cap: int
) -> Future[_Measured]:
    def work(sandbox: Sandbox, limits: Limits) -> _Measured:
        measured = measure(sandbox, task, limits, output_cap=output_cap)
        if isinstance(measured, dict):
            _keep(task, path, facts, measured)
        return measured

    return pool.run_with(work)


def measure(
    sandbox: Sandbox, task: ProgramTask, limits: Limits, *, output_cap: int, runs: int = RUNS
) -> _Measured:
    """The reference's CPU seconds on each case of `task` (the most of `runs` runs),
    or why it could not be measured: a run that did not exit 0 within
    MEASURED_CPU_S."""
    assert task.reference is not None
    under = limits.model_copy(update={"cpu_s": MEASURED_CPU_S, "timeout_s": MEASURED_WALL_S})
    most: dict[str, float] = {}
    for name, case in task.named_cases:
        for _ in range(runs):
            with sandbox.program(
                task.reference, stdin=case.input, output_cap=output_cap, limits=under
            ) as run:
                pass
            if run.stop is not None or run.exit is None or run.exit.code != 0:
                how = f"{run.stop.value}: {run.stop_detail}" if run.stop else "it did not exit 0"
                return f"the reference did not finish case {name} ({how})"
            most[name] = max(most.get(name, 0.0), round(run.exit.cpu_s, 4))
    return most


def _path(task: ProgramTask, facts: dict[str, str]) -> Path:
    assert task.reference is not None
    key = {
        "task": task.digest,
        "reference": hashlib.sha256(task.reference.encode()).hexdigest(),
        "machine": facts,
        "runs": RUNS,
        "version": VERSION,
    }
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return cache_dir() / "calibration" / f"{name}.json"


def _cached(task: ProgramTask, path: Path) -> dict[str, float] | None:
    """The reference's CPU seconds on each case, as this machine measured them before
    (kept at `path`)."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))["reference_s"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    names = {name for name, _ in task.named_cases}
    if not isinstance(kept, dict) or set(kept) != names:
        return None
    return {name: float(seconds) for name, seconds in kept.items()}


def _keep(task: ProgramTask, path: Path, facts: dict[str, str], measured: dict[str, float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "task": task.id,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": facts,
        "runs": RUNS,
        "reference_s": measured,
    }
    part = path.with_suffix(f".{os.getpid()}.part")
    part.write_text(json.dumps(entry, indent=1, sort_keys=True), encoding="utf-8")
    part.replace(path)
