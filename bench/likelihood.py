"""What a candidate's log-likelihood costs with the embedded model, in one run.

Compares, on the same prompts and seeds:
  plain        generation as `codetrial run` does it, scoring pass included
  scoring      the batched scoring pass alone (re-run on the same cached tokens)
  per-token    llama-cpp-python's own path: logits for every position and
               `logprobs` on the chat completion
Prints median tokens/s and ratios. Usage: python -m bench.likelihood [N]
"""

from __future__ import annotations

import statistics
import sys
import time

from llama_cpp import Llama

from codetrial.config import Endpoints
from codetrial.models import create_backend
from codetrial.models.embedded import EmbeddedBackend, _score_generated, threads
from codetrial.models.weights import QWEN_CODER_05B
from codetrial.records import GenerationOptions, Message, wire

PROMPTS = (
    "Write a Python function is_prime(n) that returns True when n is prime.",
    "Write a Python function that merges two sorted lists into one sorted list.",
    "Write a Python function that returns the n-th Fibonacci number iteratively.",
)


def main(runs: int) -> None:
    backend = create_backend("embedded", Endpoints())
    assert isinstance(backend, EmbeddedBackend)
    per_token = Llama(
        model_path=str(QWEN_CODER_05B.prepare()),
        n_ctx=2048,
        logits_all=True,
        n_threads=threads(),
        verbose=False,
    )
    plain, scoring, slow = [], [], []
    for index in range(runs):
        messages = [Message("user", PROMPTS[index % len(PROMPTS)])]
        options = GenerationOptions(0.8, 100 + index, 200, 2048, False)
        started = time.perf_counter()
        generation = backend.generate(messages, options)
        elapsed = time.perf_counter() - started
        tokens = generation.completion_tokens or 1
        plain.append(tokens / elapsed)
        started = time.perf_counter()
        _score_generated(backend._llama, generation.prompt_tokens or 0)
        scoring.append((time.perf_counter() - started) / elapsed)
        started = time.perf_counter()
        response = per_token.create_chat_completion(
            messages=wire(messages),
            temperature=0.8,
            seed=100 + index,
            max_tokens=200,
            logprobs=True,
            top_logprobs=1,
        )
        assert response["choices"][0]["logprobs"], "llama-cpp returned no per-token logprobs"
        slow.append(response["usage"]["completion_tokens"] / (time.perf_counter() - started))
    backend.close()
    print(f"{runs} generations each, medians")
    print(f"  plain generation with scoring   {statistics.median(plain):6.1f} tokens/s")
    print(f"  scoring pass / whole generation {100 * statistics.median(scoring):6.1f} %")
    print(f"  llama-cpp per-token logprobs    {statistics.median(slow):6.1f} tokens/s")
    ratio = statistics.median(plain) / statistics.median(slow)
    print(f"  plain / per-token               {ratio:6.1f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
