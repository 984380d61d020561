"""The embedded judge's reading of a run's candidates: in parts against in one piece.

For the distinct candidates (first attempts) of the given tasks of a run, the embedded
judge reads every judge prompt (zero-shot, as a trained judge reads it, unless --shots
says how many worked examples it shows) two ways:
  parts   as codetrial reads it: what every judge prompt shares (with its examples),
          the task, then the code and the question, the parts a prompt shares with
          the one before it kept in the KV cache
  whole   the same tokens in one piece, from an empty cache
The two alternate which goes first, task by task, each from a freshly loaded model.
Prints, per mode, seconds per candidate, and the ratio.
Usage: python -m bench.judge_states RUN_DIR [--shots N] TASK_ID...
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from codetrial.config import Endpoints
from codetrial.kinds import stored_tasks
from codetrial.models import create_backend
from codetrial.models.batched import prompt_tokens
from codetrial.models.embedded import EmbeddedBackend
from codetrial.prompts import judge_messages
from codetrial.records import GenerationOptions
from codetrial.selection.pools import entries
from codetrial.store import RunStore
from codetrial.tasks import Task

MODES = ("parts", "whole")
OPTIONS = GenerationOptions(0.0, 0, 1, 4096, False)


def read(task: Task, codes: list[str], shots: int, parts: bool) -> tuple[float, int]:
    """Seconds to read every code's judge prompt, and the prompts' tokens."""
    backend = create_backend("embedded", Endpoints())
    assert isinstance(backend, EmbeddedBackend)
    try:
        llama = backend._load(OPTIONS)
        messages = [judge_messages(task, code, shots, parts=parts) for code in codes]
        started = time.perf_counter()
        for prompt in messages:
            backend.hidden_state(prompt, OPTIONS)
        seconds = time.perf_counter() - started
        return seconds, sum(len(prompt_tokens(llama, prompt)[0]) for prompt in messages)
    finally:
        backend.close()


def main(run_dir: Path, shots: int, task_ids: list[str]) -> None:
    store = RunStore.open(run_dir)
    tasks = [
        t
        for t in stored_tasks(store.manifest.config, store.manifest.task_sha256, store.run_dir)
        if isinstance(t, Task) and t.id in task_ids
    ]
    found = entries(store, tasks, store.manifest.config.models[0])
    load = os.getloadavg()
    totals = dict.fromkeys(MODES, 0.0)
    candidates = 0
    for index, task in enumerate(tasks):
        codes = list(dict.fromkeys(e.record.code for e in found.get(task.id, []) if e.record.code))
        candidates += len(codes)
        for mode in MODES if index % 2 == 0 else reversed(MODES):
            seconds, tokens = read(task, codes, shots, mode == "parts")
            totals[mode] += seconds
            print(
                f"{task.id}: {len(codes)} candidates, {tokens} prompt tokens, "
                f"{mode}: {seconds:.1f} s"
            )
    print(f"{candidates} distinct candidates of {len(tasks)} tasks in {run_dir}, {shots}-shot")
    for mode, seconds in totals.items():
        print(f"  {mode:6} {seconds / candidates:6.2f} s a candidate")
    ratio = totals["whole"] / totals["parts"]
    print(f"  whole / parts: {ratio:.2f}x")
    print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the embedded judge, in parts and whole")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("task_ids", nargs="+")
    parser.add_argument("--shots", type=int, default=0)
    arguments = parser.parse_args()
    main(arguments.run_dir, arguments.shots, arguments.task_ids)
