"""Many completions of one prompt, decoded together by llama.cpp.

The prompt is evaluated once, in sequence 0; its KV cells are then shared with
sequences 1..N-1 (a unified cache stores a shared cell once, tagged with every
sequence that reads it). Each step decodes one batch holding the newest token of
every unfinished sequence, and each sequence samples its next token from its own row
of logits with its own sampler chain, seeded with its own seed: the chain
llama-cpp-python's chat completion builds, so a lone sequence draws what
`create_chat_completion` draws. With N > 1 the batch shape changes the floating-point
sums, so sequence i need not equal a lone draw with the same seed; it is the same
every time the same N seeds are drawn together.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import _internals
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

from codetrial.errors import PromptTooLong
from codetrial.prompts import PART
from codetrial.records import GenerationOptions, Message, wire

internals: Any = _internals  # its wrappers are untyped

# What llama-cpp-python's chat completion samples with, besides the temperature.
TOP_K = 40
TYPICAL_P = 1.0
TOP_P = 0.95
MIN_P = 0.05


@dataclass
class Drawn:
    """One sequence's completion: its tokens, text, why it ended, and the model's
    log-probability of its tokens under the raw logits it was sampled from (the
    ending token excluded)."""

    tokens: list[int] = field(default_factory=list)
    text: str = ""
    finish_reason: str = "length"
    logprob_sum: float = 0.0


_REPLY_GOES_ON = "\u0000the-reply-goes-on-here\u0000"


def prompt_tokens(llama: Any, messages: Sequence[Message]) -> tuple[list[int], list[str]]:
    """The prompt tokens and stop strings of a chat completion, formatted by the GGUF
    file's own chat template as `create_chat_completion` formats them. Messages that
    end with the model's own (assistant) message are its reply's start: the prompt
    stops where that message's text does, so the model goes on with it."""
    parts, stop = prompt_parts(llama, messages)
    return [token for part in parts for token in part], stop


def prompt_parts(llama: Any, messages: Sequence[Message]) -> tuple[list[list[int]], list[str]]:
    """`prompt_tokens` cut where the messages' text holds `PART` (the marks left out):
    each cut falls where the tokens of the text before its mark stop agreeing with the
    whole prompt's, so the same text always cuts at the same token."""
    model = llama._model
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter: Any = Jinja2ChatFormatter(
        template=llama.metadata["tokenizer.chat_template"],
        eos_token=model.token_get_text(eos) if eos != -1 else "",
        bos_token=model.token_get_text(bos) if bos != -1 else "",
        stop_token_ids=[eos],
    )
    wired = wire(messages)
    goes_on = bool(messages) and messages[-1].role == "assistant"
    if goes_on:
        wired[-1]["content"] += _REPLY_GOES_ON
    result = formatter(messages=wired)
    text = result.prompt.split(_REPLY_GOES_ON)[0] if goes_on else result.prompt
    pieces = text.split(PART)

    def tokenize(piece: str) -> list[int]:
        tokens: list[int] = llama.tokenize(
            piece.encode(), add_bos=not result.added_special, special=True
        )
        return tokens

    tokens = tokenize("".join(pieces))
    cuts = [0]
    for end in range(1, len(pieces)):
        before = tokenize("".join(pieces[:end]))
        agree = cuts[-1]
        while agree < min(len(before), len(tokens)) and before[agree] == tokens[agree]:
            agree += 1
        cuts.append(agree)
    cuts.append(len(tokens))
    parts = [tokens[a:b] for a, b in itertools.pairwise(cuts) if b > a]
    stop = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
    return parts, stop


def check_fits(prompt: Sequence[int], n_ctx: int) -> None:
    """Raise PromptTooLong when `prompt` leaves no room for a reply in a context
    window of `n_ctx` tokens, as llama.cpp's own completion finds it."""
    if len(prompt) >= n_ctx:
        raise PromptTooLong(
            f"the prompt's {len(prompt)} tokens exceed the context window of {n_ctx} (--num-ctx)",
            prompt_tokens=len(prompt),
            context=n_ctx,
        )


def _sampler(options: GenerationOptions) -> Any:
    sampler = internals.LlamaSampler()
    if options.temperature == 0:
        sampler.add_greedy()
        return sampler
    sampler.add_top_k(TOP_K)
    sampler.add_typical(TYPICAL_P, 1)
    sampler.add_top_p(TOP_P, 1)
    sampler.add_min_p(MIN_P, 1)
    sampler.add_temp(options.temperature)
    sampler.add_dist(options.seed)
    return sampler


class Decoder:
    """A context for `sequences` sequences of at most `n_ctx` tokens each, on the
    loaded model's weights; kept while batches of that shape keep coming."""

    def __init__(self, llama: Any, sequences: int, n_ctx: int, max_tokens: int) -> None:
        params = llama_cpp.llama_context_params.from_buffer_copy(llama.context_params)
        params.n_ctx = n_ctx + (sequences - 1) * max_tokens
        params.n_seq_max = sequences
        params.kv_unified = True
        self.shape = (llama, sequences, n_ctx, max_tokens)
        self.llama = llama
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.context = internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self.batch = internals.LlamaBatch(
            n_tokens=max(llama.n_batch, sequences), embd=0, n_seq_max=sequences, verbose=False
        )
        self.n_vocab = llama.n_vocab()

    def close(self) -> None:
        self.batch.close()
        self.context.close()

    def _fill(self, entries: Sequence[tuple[int, int, int]], logits_at: int) -> None:
        """Put (token, position, sequence) entries in the batch, with logits for the
        entries from index `logits_at` on."""
        batch = self.batch.batch
        batch.n_tokens = len(entries)
        for i, (token, position, sequence) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = position
            batch.seq_id[i][0] = sequence
            batch.n_seq_id[i] = 1
            batch.logits[i] = i >= logits_at

    def _logprob(self, row: int, token: int) -> float:
        logits = np.ctypeslib.as_array(self.context.get_logits_ith(row), shape=(self.n_vocab,))
        top = float(logits.max())
        return float(logits[token]) - top - float(np.log(np.exp(logits - top).sum()))

    def draw(
        self, prompt: list[int], stops: Sequence[str], options: Sequence[GenerationOptions]
    ) -> list[Drawn]:
        """One completion per options (their seeds and temperature), all of `prompt`."""
        check_fits(prompt, self.n_ctx)
        limit = min(self.max_tokens, self.n_ctx - len(prompt))
        self.context.kv_cache_clear()
        step = self.llama.n_batch
        for start in range(0, len(prompt), step):
            chunk = prompt[start : start + step]
            self._fill([(t, start + i, 0) for i, t in enumerate(chunk)], len(chunk) - 1)
            self.context.decode(self.batch)
        for sequence in range(1, len(options)):
            self.context.kv_cache_seq_cp(0, sequence, -1, -1)
        samplers = [_sampler(o) for o in options]
        drawn = [Drawn() for _ in options]
        stop_bytes = [s.encode() for s in stops]
        rows = {sequence: self.batch.batch.n_tokens - 1 for sequence in range(len(options))}
        while rows:
            entries = []
            for sequence, row in rows.items():
                token = samplers[sequence].sample(self.context, row)
                result = drawn[sequence]
                if llama_cpp.llama_vocab_is_eog(self.llama._model.vocab, token):
                    result.finish_reason = "stop"
                    continue
                result.logprob_sum += self._logprob(row, token)
                result.tokens.append(token)
                if stop_bytes:
                    text = self.llama.detokenize(result.tokens, prev_tokens=prompt)
                    if any(s in text for s in stop_bytes):
                        result.finish_reason = "stop"
                        continue
                if len(result.tokens) >= limit:
                    continue
                entries.append((token, len(prompt) + len(result.tokens) - 1, sequence))
            if not entries:
                break
            self._fill(entries, 0)
            self.context.decode(self.batch)
            rows = {sequence: row for row, (_, _, sequence) in enumerate(entries)}
        for result in drawn:
            text = self.llama.detokenize(result.tokens, prev_tokens=prompt)
            cut = min((text.index(s) for s in stop_bytes if s in text), default=len(text))
            result.text = text[:cut].decode("utf-8", errors="ignore")
        return drawn
