"""N candidates of one prompt: decoded together against N generations one after another.

For HumanEval prompts as `codetrial run --suite humaneval` sends them, at T = 0.8, each
N in turn:
  sequential  N calls of the backend's `generate` (seeds s .. s+N-1), each evaluating
              the prompt and decoding alone, as `run --samples N` did before
  together    one `generate_together`: the prompt evaluated once, one batch per step
  stream      every prompt's N in one `generate_many`, `TASKS_TOGETHER` prompts a
              call, as `codetrial run --samples N` draws first attempts: a sample
              that ends gives its slot to the next one waiting, of any prompt
The first two alternate which goes first, prompt by prompt; the stream follows. Prints,
per N, the median over prompts of wall seconds per prompt and of completion tokens per
second (for the stream, its total over the prompts), the median of the prompts'
sequential / together time ratios, and sequential's total time over the stream's.
Usage: python -m bench.sampling [PROMPTS] [MODEL] [N ...]
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import time

from codetrial.config import Endpoints
from codetrial.gate import get_profile
from codetrial.models import create_backend
from codetrial.models.embedded import EmbeddedBackend
from codetrial.pipeline import TASKS_TOGETHER
from codetrial.prompts import first_messages, system_message
from codetrial.records import Generation, GenerationOptions
from codetrial.tasks import load_suite

MODES = ("sequential", "together")


def main(prompts: int, model: str, sizes: list[int]) -> None:
    tasks = load_suite("humaneval")
    chosen = tasks[:: len(tasks) // prompts][:prompts]
    profile = get_profile(chosen[0].policy)
    system = system_message(profile.allowed, profile.forbidden)
    backend = create_backend(model, Endpoints())
    assert isinstance(backend, EmbeddedBackend)
    base = GenerationOptions(0.8, 42, 512, 4096, False)
    backend.generate(first_messages(chosen[0], system), base)  # loads before the clock
    load = os.getloadavg()
    print(f"{model}: {len(chosen)} HumanEval prompts, T = 0.8, 512 new tokens at most")
    print("   N  mode        s/prompt  tokens/s  prompt tok  completion tok")
    for n in sizes:
        options = [dataclasses.replace(base, seed=base.seed + i) for i in range(n)]
        seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
        rates: dict[str, list[float]] = {mode: [] for mode in MODES}
        counts: dict[str, list[tuple[int, int]]] = {mode: [] for mode in MODES}
        for index, task in enumerate(chosen):
            messages = first_messages(task, system)
            for mode in MODES if index % 2 == 0 else reversed(MODES):
                started = time.perf_counter()
                drawn: list[Generation]
                if mode == "together":
                    drawn = backend.generate_together(messages, options)
                else:
                    drawn = [backend.generate(messages, o) for o in options]
                elapsed = time.perf_counter() - started
                completion = sum(g.completion_tokens or 0 for g in drawn)
                prompt = drawn[0].prompt_tokens or 0
                evaluated = prompt if mode == "together" else prompt * n
                seconds[mode].append(elapsed)
                rates[mode].append(completion / elapsed)
                counts[mode].append((evaluated, completion))
        for mode in MODES:
            evaluated = sum(c[0] for c in counts[mode])
            completion = sum(c[1] for c in counts[mode])
            wall, rate = statistics.median(seconds[mode]), statistics.median(rates[mode])
            print(f"  {n:2}  {mode:10}  {wall:8.2f}  {rate:8.1f}  {evaluated:10}  {completion:14}")
        asked = [(first_messages(task, system), options) for task in chosen]
        started = time.perf_counter()
        streamed = [
            per_prompt
            for at in range(0, len(asked), TASKS_TOGETHER)
            for per_prompt in backend.generate_many(asked[at : at + TASKS_TOGETHER])
        ]
        stream = time.perf_counter() - started
        completion = sum(g.completion_tokens or 0 for drawn in streamed for g in drawn)
        evaluated = sum(drawn[0].prompt_tokens or 0 for drawn in streamed)
        wall = stream / len(chosen)
        print(
            f"  {n:2}  stream      {wall:8.2f}  {completion / stream:8.1f}  "
            f"{evaluated:10}  {completion:14}"
        )
        ratios = [a / b for a, b in zip(seconds["sequential"], seconds["together"], strict=True)]
        middle = statistics.median(ratios)
        print(
            f"  {n:2}  sequential / together, per prompt: median {middle:.2f}x "
            f"({min(ratios):.2f} .. {max(ratios):.2f})"
        )
        print(
            f"  {n:2}  sequential / stream, all prompts: {sum(seconds['sequential']) / stream:.2f}x"
        )
    backend.close()
    print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 5,
        sys.argv[2] if len(sys.argv) > 2 else "embedded",
        [int(n) for n in sys.argv[3:]] or [1, 4, 10],
    )
