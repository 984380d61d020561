"""Many completions of one prompt, and of several prompts, decoded together by
llama.cpp.

A prompt is evaluated once, in a sequence of its own; its KV cells are then shared
with the sequences that draw its completions (a unified cache stores a shared cell
once, tagged with every sequence that reads it). Each step decodes one batch holding
the newest token of every unfinished sequence, and each sequence samples its next
token from its own row of logits with its own sampler chain, seeded with its own
seed: the chain llama-cpp-python's chat completion builds, so a lone sequence draws
what `create_chat_completion` draws. With more than one sequence the batch shape
changes the floating-point sums, so a completion need not equal a lone draw with the
same seed; it is the same every time the same requests are drawn together."""

from __future__ import annotations

import itertools
from collections import deque
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


@dataclass
class Request:
    """The prompt of a chat completion (`prompt_tokens`), and one options a
    completion to draw of it."""

    prompt: list[int]
    stops: Sequence[str]
    options: Sequence[GenerationOptions]


@dataclass
class _Sample:
    """A completion being drawn: its request, sampler, what it drew so far, and the
    slot (sequence) it is decoded in once admitted."""

    request: int
    sampler: Any
    limit: int
    stops: list[bytes]
    drawn: Drawn = field(default_factory=Drawn)
    text: bytes = b""
    slot: int = -1


class Decoder:
    """A context for `slots` sequences on the loaded model's weights, each request's
    prompt of at most `n_ctx` tokens, each completion of at most `max_tokens`; kept
    while requests of that shape keep coming.

    Requests are drawn in order, their completions decoded as a stream through the
    slots: a request's prompt is evaluated once, in a sequence of its own, with the
    logits of its last token; every completion samples its first token from those
    logits then, and waits for a slot; admitted, it shares the prompt's KV cells and
    decodes one token a step with every other admitted completion, whatever request it
    belongs to. When a completion ends its slot takes the next waiting one, and once
    no completion of the current request waits, the next request's prompt is
    evaluated. So steps stay as full as there is work, and the draws depend only on
    the requests, their order and `slots`."""

    def __init__(self, llama: Any, slots: int, n_ctx: int, max_tokens: int) -> None:
        params = llama_cpp.llama_context_params.from_buffer_copy(llama.context_params)
        self.cells = params.n_ctx = n_ctx + slots * max_tokens
        params.n_seq_max = slots + 1
        params.kv_unified = True
        self.shape = (llama, slots, n_ctx, max_tokens)
        self.llama = llama
        self.slots = slots
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.context = internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self.batch = internals.LlamaBatch(
            n_tokens=max(llama.n_batch, slots), embd=0, n_seq_max=slots + 1, verbose=False
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

    def _step(self, sample: _Sample, row: int) -> bool:
        """Sample `sample`'s next token from the logits of batch row `row`; whether
        the completion goes on (the token is then the last of `sample.drawn.tokens`)."""
        token = sample.sampler.sample(self.context, row)
        drawn = sample.drawn
        if llama_cpp.llama_vocab_is_eog(self.llama._model.vocab, token):
            drawn.finish_reason = "stop"
            return False
        drawn.logprob_sum += self._logprob(row, token)
        drawn.tokens.append(token)
        seen = len(sample.text)
        sample.text += self.llama._model.detokenize([token])
        if sample.stops:
            tail = sample.text[max(0, seen - max(map(len, sample.stops)) + 1) :]
            if any(s in tail for s in sample.stops):
                drawn.finish_reason = "stop"
                return False
        return len(drawn.tokens) < sample.limit

    def _evaluate(self, prompt: list[int]) -> None:
        """Evaluate `prompt` in the prompt's own sequence, `slots`, with the logits of
        its last token in the batch's last row."""
        step = self.llama.n_batch
        for start in range(0, len(prompt), step):
            chunk = prompt[start : start + step]
            self._fill([(t, start + i, self.slots) for i, t in enumerate(chunk)], len(chunk) - 1)
            self.context.decode(self.batch)

    def draw(self, requests: Sequence[Request]) -> list[list[Drawn]]:
        """Per request, one completion per options (their seeds and temperature)."""
        for request in requests:
            check_fits(request.prompt, self.n_ctx)
        self.context.kv_cache_clear()
        samples = [
            [
                _Sample(
                    index,
                    _sampler(o),
                    min(self.max_tokens, self.n_ctx - len(r.prompt)),
                    [s.encode() for s in r.stops],
                )
                for o in r.options
            ]
            for index, r in enumerate(requests)
        ]
        free = list(range(self.slots - 1, -1, -1))
        running: list[_Sample] = []
        waiting: deque[_Sample] = deque()
        holding = [0] * len(requests)
        following = iter(range(len(requests)))
        upcoming = next(following, None)
        while True:
            if not waiting and upcoming is not None and free:
                request, size = requests[upcoming], len(requests[upcoming].prompt)
                held = sum(len(requests[i].prompt) for i, n in enumerate(holding) if n)
                reserved = sum(s.limit for s in running)
                if held + reserved + size + samples[upcoming][0].limit <= self.cells:
                    self._evaluate(request.prompt)
                    row = self.batch.batch.n_tokens - 1
                    waiting.extend(s for s in samples[upcoming] if self._step(s, row))
                    holding[upcoming] = len(waiting)
                    if not waiting:
                        self.context.kv_cache_seq_rm(self.slots, -1, -1)
                    upcoming = next(following, None)
                    continue
            while waiting and free:
                sample = waiting.popleft()
                sample.slot = free.pop()
                self.context.kv_cache_seq_cp(self.slots, sample.slot, -1, -1)
                running.append(sample)
                if not waiting:
                    self.context.kv_cache_seq_rm(self.slots, -1, -1)
            if not running:
                break
            entries = [
                (
                    s.drawn.tokens[-1],
                    len(requests[s.request].prompt) + len(s.drawn.tokens) - 1,
                    s.slot,
                )
                for s in running
            ]
            self._fill(entries, 0)
            self.context.decode(self.batch)
            going = []
            for row, sample in enumerate(running):
                if self._step(sample, row):
                    going.append(sample)
                    continue
                self.context.kv_cache_seq_rm(sample.slot, -1, -1)
                free.append(sample.slot)
                holding[sample.request] -= 1
            running = going
        for per_request in samples:
            for sample in per_request:
                cut = min(
                    (sample.text.index(s) for s in sample.stops if s in sample.text),
                    default=len(sample.text),
                )
                sample.drawn.text = sample.text[:cut].decode("utf-8", errors="ignore")
        return [[s.drawn for s in per_request] for per_request in samples]
