"""What one decoding step of the embedded model costs, by how many sequences it carries.

Drawing N candidates together (`bench.sampling`) gains what a step of N tokens saves
over N steps of one. This times that directly, on the decoder `generate_together`
uses: a 222-token prompt evaluated once and shared by every sequence, then steps of
B tokens (one per sequence), each with the logits of every row as sampling needs,
and again with the last row's only (the cost of the output layer is the difference).
Prints the median over repeats of ms per step and per token, for each B, and the
prompt's evaluation per token beside them (it computes one row of logits).
Usage: python -m bench.decode_steps [REPEATS] [B ...]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from llama_cpp import Llama

from codetrial.models.batched import Decoder
from codetrial.models.embedded import threads
from codetrial.models.weights import QWEN_CODER_05B

PROMPT_TOKENS = 222
FIRST_TOKEN = 1000


def main(repeats: int, sizes: list[int]) -> None:
    llama = Llama(model_path=str(QWEN_CODER_05B.prepare()), n_threads=threads(), verbose=False)
    most, steps = max(sizes), 2 * repeats * len(sizes)
    decoder = Decoder(llama, most, PROMPT_TOKENS + steps, steps)
    prompt = list(range(FIRST_TOKEN, FIRST_TOKEN + PROMPT_TOKENS))
    decoder.context.kv_cache_clear()
    decoder._fill([(t, i, 0) for i, t in enumerate(prompt)], PROMPT_TOKENS - 1)
    started = time.perf_counter()
    decoder.context.decode(decoder.batch)
    evaluated = (time.perf_counter() - started) / PROMPT_TOKENS
    for sequence in range(1, most):
        decoder.context.kv_cache_seq_cp(0, sequence, -1, -1)
    positions = [PROMPT_TOKENS] * most
    load = os.getloadavg()
    print(f"{threads()} threads; the prompt: {evaluated * 1000:.1f} ms per token")
    print("   B   ms/step  ms/token  ms/token, last row's logits only")
    for size in sizes:
        medians = []
        for logits_from in (0, size - 1):
            seconds = []
            for _ in range(repeats):
                entries = [(FIRST_TOKEN + s, positions[s], s) for s in range(size)]
                decoder._fill(entries, logits_from)
                started = time.perf_counter()
                decoder.context.decode(decoder.batch)
                seconds.append(time.perf_counter() - started)
                for sequence in range(size):
                    positions[sequence] += 1
            medians.append(statistics.median(seconds) * 1000)
        every, last = medians
        print(f"  {size:2}  {every:8.1f}  {every / size:8.1f}  {last / size:8.1f}")
    decoder.close()
    print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 7,
        [int(n) for n in sys.argv[2:]] or [1, 2, 3, 4, 8, 10, 16, 32],
    )
