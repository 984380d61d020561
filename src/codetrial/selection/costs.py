"""What gathering selection evidence cost on this machine, so that an arm's cost can
count what a strategy needs on top of generating the candidates.

Each step that fills a cache (writing tests, running them, judging, reading hidden
states) is timed while it computes something; `costs.json` in the run's
`selection/` folder keeps, per cache, the wall seconds of those passes up to what
they last kept, the items kept (tasks or distinct candidates) and the completion
tokens they took, added up over passes, so a pass cut short and resumed counts what
it kept once. A cache made afresh starts its entry afresh. A cache made before costs
were kept, or evidence read from a file, has no cost here: it is reported as not
measured rather than as free.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from codetrial.selection.strategies import Need
from codetrial.store.artifacts import read_json, write_atomic

COSTS = "costs.json"


@dataclass(frozen=True)
class Cost:
    """Completion tokens and wall seconds: of one attempt, or of one item of a step."""

    tokens: float
    seconds: float

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.tokens + other.tokens, self.seconds + other.seconds)

    def __mul__(self, times: int) -> Cost:
        return Cost(self.tokens * times, self.seconds * times)


class Tally:
    """What a timed pass has kept: items, the completion tokens they took, and when
    the last were kept."""

    def __init__(self) -> None:
        self.items = 0
        self.tokens = 0
        self.start = self.kept_at = time.perf_counter()

    def add(self, items: int, tokens: int = 0) -> None:
        """Count `items` just kept in the cache."""
        self.items += items
        self.tokens += tokens
        self.kept_at = time.perf_counter()


@contextmanager
def timed(cache: Path) -> Iterator[Tally]:
    """Time the pass that fills `cache` and add it to the ledger beside it, when it
    kept anything (also when it was cut short: up to what it last kept)."""
    ledger_path = cache.parent / COSTS
    afresh = not cache.exists()
    tally = Tally()
    try:
        yield tally
    finally:
        if tally.items:
            ledger = read_json(ledger_path, dict)
            before = {} if afresh else ledger.get(cache.name, {})
            ledger[cache.name] = {
                "seconds": before.get("seconds", 0.0) + tally.kept_at - tally.start,
                "items": before.get("items", 0) + tally.items,
                "tokens": before.get("tokens", 0) + tally.tokens,
            }
            write_atomic(ledger_path, json.dumps(ledger, indent=1))


def per_item(cache: Path) -> Cost | None:
    """One item's cost in the pass(es) that filled `cache`, if they were timed."""
    spent = read_json(cache.parent / COSTS, dict).get(cache.name)
    if not isinstance(spent, dict) or not spent.get("items"):
        return None
    return Cost(spent["tokens"] / spent["items"], spent["seconds"] / spent["items"])


@dataclass(frozen=True)
class Step:
    """A step of gathering: its cost per item (None: not measured here) and whether
    it is done once a task (writing tests) or once a candidate (everything else)."""

    cost: Cost | None
    per_task: bool = False


@dataclass(frozen=True)
class Overhead:
    """The steps behind each kind of evidence (a step can serve several: one pass of
    the judge model gives both the zero-shot judge and the trained judge)."""

    steps: Mapping[Need, Mapping[str, Step]]

    def per_task(self, needs: Iterable[Need], size: int) -> Cost | None:
        """A task's cost of the evidence for `needs` among `size` candidates (None when
        any of it was not measured, or not gathered)."""
        needs = list(needs)
        if any(need not in self.steps for need in needs):
            return None
        used = {name: step for need in needs for name, step in self.steps[need].items()}
        total = Cost(0.0, 0.0)
        for step in used.values():
            if step.cost is None:
                return None
            total += step.cost * (1 if step.per_task else size)
        return total
