"""The bounded repair loop's decision: whether a try is followed by another.

A repair sees feedback from the visible tests (or the gate, or the parser) only; what
it is asked is its task's kind's (see `codetrial.kinds`). Hidden tests never reach a
model: a candidate that passes the visible tests and fails hidden ones gives the
model nothing it may see, so it is not repaired. A reply cut off at a token limit
says so, whatever the kind, in its verdict's detail and in what the repair is told.
"""

from __future__ import annotations

import dataclasses

from codetrial.records import (
    CUT_OFF,
    AttemptRecord,
    Generation,
    GenerationOptions,
    Outcome,
    Verdict,
)


def needs_repair(previous: AttemptRecord, attempts_allowed: int) -> bool:
    return (
        previous.outcome not in (Outcome.PASSED, Outcome.INFRA_ERROR)
        and previous.feedback is not None
        and previous.attempt < attempts_allowed
    )


def cut_off(verdict: Verdict, generation: Generation, options: GenerationOptions) -> Verdict:
    """`verdict` on a reply that `generation` cut off at a token limit (its
    `max_tokens` or the context window of `options`), saying so first in its detail
    and its feedback; any other verdict as it is."""
    if generation.finish_reason != CUT_OFF:
        return verdict
    written = generation.completion_tokens
    if written is None:
        where = "at a token limit"
    elif written >= options.max_tokens:
        where = f"at {written} tokens (the limit)"
    elif (generation.prompt_tokens or 0) + written >= options.num_ctx:
        where = f"at {written} tokens, where the context window of {options.num_ctx} filled"
    else:
        where = f"at {written} tokens (a token limit)"
    detail = f"reply cut off {where}"
    told = (
        f"Your reply was cut off {where}; what was judged is only what came before. "
        "Write a shorter reply: the code asked for, without long explanations."
    )
    return dataclasses.replace(
        verdict,
        detail=f"{detail}; {verdict.detail}" if verdict.detail else detail,
        feedback=None if verdict.feedback is None else f"{told}\n\n{verdict.feedback}",
    )
