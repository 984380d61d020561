"""The model's hidden states over a prompt: what a trained judge reads.

A second llama.cpp context on the loaded weights returns, for every prompt token,
the last layer's output after the final norm (the vector the language-model head
turns into next-token logits). A prompt is summarised as the mean of those vectors
over its tokens, followed by the last token's vector: the state from which the
model would say its next word, for a judge prompt "yes" or "no".

A prompt comes in parts (see `codetrial.prompts.PART`): the judge prompts of one
task's candidates share everything before the code, so the reader keeps those
positions' cells and the sum of their states and decodes only the rest.
"""

from __future__ import annotations

from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import _internals

internals: Any = _internals  # its wrappers are untyped

POOLING = "mean over the prompt's tokens, then the last token's (final-norm output)"


class StateReader:
    """An embeddings context for prompts of at most `n_ctx` tokens."""

    def __init__(self, llama: Any, n_ctx: int) -> None:
        params = llama_cpp.llama_context_params.from_buffer_copy(llama.context_params)
        params.n_ctx = n_ctx
        params.n_seq_max = 1
        params.embeddings = True
        params.pooling_type = llama_cpp.LLAMA_POOLING_TYPE_NONE
        self.shape = (llama, n_ctx)
        self.llama = llama
        self.n_ctx = n_ctx
        self.width = llama.n_embd()
        self.context = internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self.batch = internals.LlamaBatch(
            n_tokens=llama.n_batch, embd=0, n_seq_max=1, verbose=False
        )
        self.kept: list[tuple[list[int], np.ndarray]] = []

    def close(self) -> None:
        self.batch.close()
        self.context.close()

    def read(self, parts: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """The summary (2 x the model's width, float32) of the prompt `parts` join into,
        and the logits of the token that would follow it (float64): every position's
        output passes through the language-model head anyway. Each part is decoded on
        the KV cells of the parts before it, so the leading parts a prompt shares with
        the one read before it are kept rather than decoded again, and a prompt reads
        the same whatever came before it."""
        size = sum(len(part) for part in parts)
        if not size or size > self.n_ctx:
            raise ValueError(f"Requested tokens ({size}) exceed context window of {self.n_ctx}")
        same = 0
        while same < min(len(parts) - 1, len(self.kept)) and self.kept[same][0] == parts[same]:
            same += 1
        del self.kept[same:]
        start = sum(len(part) for part, _ in self.kept)
        self.context.kv_cache_seq_rm(0, start, -1)
        last = np.zeros(self.width)
        for part in parts[same:]:
            total = np.zeros(self.width, dtype=np.float64)
            for offset in range(0, len(part), self.llama.n_batch):
                chunk = part[offset : offset + self.llama.n_batch]
                self.batch.set_batch(batch=chunk, n_past=start + offset, logits_all=True)
                self.context.decode(self.batch)
                states = np.ctypeslib.as_array(
                    llama_cpp.llama_get_embeddings(self.context.ctx),
                    shape=(len(chunk), self.width),
                )
                total += states.sum(axis=0, dtype=np.float64)
                last = states[-1].astype(np.float64)
            self.kept.append((part, total))
            start += len(part)
        following = np.ctypeslib.as_array(
            llama_cpp.llama_get_logits_ith(self.context.ctx, -1), shape=(self.llama.n_vocab(),)
        ).astype(np.float64)
        mean = sum((total for _, total in self.kept), np.zeros(self.width)) / size
        return np.concatenate([mean, last]).astype(np.float32), following
