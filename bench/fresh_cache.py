"""What evaluating every prompt from an empty KV cache costs the embedded model.

Times the contracts10 first-attempt prompts, in alternating rounds of:
  reused   llama-cpp's prefix reuse: the prompt tokens shared with the previous
           request stay cached, so the answer depends on what was asked before
  fresh    the backend's path: every request from an empty cache
Both score the generated tokens afterwards, as `codetrial run` does. Prints medians
of seconds per request and tokens/s, the spread of the round medians, and ratios.
Usage: python -m bench.fresh_cache [ROUNDS] [MAX_TOKENS]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Sequence

from llama_cpp import Llama

from codetrial.config import Endpoints
from codetrial.gate import get_profile
from codetrial.models import create_backend
from codetrial.models.embedded import EmbeddedBackend, _score_generated
from codetrial.prompts import first_messages, system_message
from codetrial.records import GenerationOptions, Message, wire
from codetrial.tasks import load_suite

MODES = ("reused", "fresh")


def _reused(
    backend: EmbeddedBackend, messages: Sequence[Message], options: GenerationOptions
) -> tuple[int, int]:
    """Generate and score without emptying the cache; the completion's token count
    and how many prompt tokens the previous request left cached."""
    llama = backend._load(options)
    before = [int(t) for t in llama.input_ids[: llama.n_tokens]]
    response = llama.create_chat_completion(
        messages=wire(messages),
        temperature=options.temperature,
        seed=options.seed,
        max_tokens=options.max_tokens,
    )
    n_prompt = response["usage"]["prompt_tokens"]
    _score_generated(llama, n_prompt)
    prompt = [int(t) for t in llama.input_ids[:n_prompt]]
    return response["usage"]["completion_tokens"], Llama.longest_token_prefix(before, prompt)


def _fresh(
    backend: EmbeddedBackend, messages: Sequence[Message], options: GenerationOptions
) -> tuple[int, int]:
    return backend.generate(messages, options).completion_tokens or 0, 0


def _pooled(rounds: list[list[float]]) -> float:
    return statistics.median(value for round_ in rounds for value in round_)


def main(rounds: int, max_tokens: int) -> None:
    tasks = load_suite("contracts10")
    profile = get_profile(tasks[0].policy)
    system = system_message(profile.allowed, profile.forbidden)
    prompts = [first_messages(task, system) for task in tasks]
    options = GenerationOptions(0.8, 42, max_tokens, 4096, False)
    backend = create_backend("embedded", Endpoints())
    assert isinstance(backend, EmbeddedBackend)
    backend.generate(prompts[-1], options)  # loads the model before the clock starts
    load = os.getloadavg()
    runs = {"reused": _reused, "fresh": _fresh}
    seconds: dict[str, list[list[float]]] = {mode: [] for mode in MODES}
    rates: dict[str, list[list[float]]] = {mode: [] for mode in MODES}
    cached: list[int] = []
    for index in range(rounds):
        for mode in MODES if index % 2 == 0 else reversed(MODES):
            seconds[mode].append([])
            rates[mode].append([])
            for messages in prompts:
                started = time.perf_counter()
                tokens, shared = runs[mode](backend, messages, options)
                elapsed = time.perf_counter() - started
                seconds[mode][-1].append(elapsed)
                rates[mode][-1].append(tokens / elapsed)
                if mode == "reused":
                    cached.append(shared)
    backend.close()
    print(f"{rounds} rounds of {len(prompts)} prompts, {max_tokens} new tokens at most")
    print(f"  load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(
        f"  prompt tokens the previous request left cached (reused): median "
        f"{statistics.median(cached):.0f}, {min(cached)} .. {max(cached)}"
    )
    print("                     median   round medians")
    for label, values in (("s/request", seconds), ("tokens/s ", rates)):
        for mode in MODES:
            medians = [statistics.median(round_) for round_ in values[mode]]
            print(
                f"  {mode:6} {label}  {_pooled(values[mode]):7.2f}   "
                f"{min(medians):6.2f} .. {max(medians):6.2f}"
            )
        print(f"  fresh / reused    {_pooled(values['fresh']) / _pooled(values['reused']):7.3f}x")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 3,
        int(sys.argv[2]) if len(sys.argv) > 2 else 512,
    )
