"""Progress of a run as it happens: what the API's functions tell, and the live bar
the command line (or `progress=True`) draws from it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress

from codetrial.records import AttemptRecord

Advance = Callable[[int], None]
Steps = Callable[[str, int], contextlib.AbstractContextManager[Advance]]


class Progress(Protocol):
    """What a run tells as it goes: its directory and how many chains it will judge
    (a chain is a sample's first attempt and its repairs), then every attempt stored."""

    def start(self, run_dir: Path, total: int) -> None: ...

    def advance(self, record: AttemptRecord) -> None: ...


class Silent:
    """Progress nobody watches."""

    def start(self, run_dir: Path, total: int) -> None:
        pass

    def advance(self, record: AttemptRecord) -> None:
        pass


class Bar:
    """A live bar on `console`: the run directory (or what `heading` names) first, then
    chains done, passes so far and tokens per second. Use it as a context manager,
    which removes the bar."""

    def __init__(self, console: Console, heading: str = "run directory") -> None:
        self.console, self.heading = console, heading
        columns = (
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("passes {task.fields[passes]}"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        self._bar = RichProgress(*columns, console=console, transient=True)
        self._task = self._bar.add_task("starting", total=None, passes=0, rate="")
        self.passes = self.tokens = 0
        self.seconds = 0.0

    def __enter__(self) -> Bar:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def start(self, run_dir: Path, total: int) -> None:
        self.console.print(f"{self.heading}: {run_dir}", soft_wrap=True, highlight=False)
        self._bar.update(self._task, total=total)

    def advance(self, record: AttemptRecord) -> None:
        self.tokens += record.completion_tokens or 0
        self.seconds += record.generation_s
        self.passes += record.passed
        rate = f"{self.tokens / self.seconds:.0f} tok/s" if self.seconds else ""
        self._bar.update(
            self._task,
            advance=int(record.attempt == 0),
            passes=self.passes,
            rate=rate,
            description=f"{record.label} · {record.task_id}",
        )


def plain_console(stderr: bool = False) -> Console:
    """A console that prints text as written. Names, paths, error messages and what a
    model or a candidate wrote can hold brackets, which rich would read as markup:
    `codetrial[ray]` would lose `[ray]`, and a stray `[/x]` would raise. Styles are
    given as `Text` instead."""
    return Console(stderr=stderr, markup=False)


@contextlib.contextmanager
def quietly(label: str, total: int) -> Iterator[Advance]:
    """Steps nobody watches."""
    yield lambda done: None


def steps(console: Console) -> Steps:
    """Labelled bars on `console` for the steps of selection (test writing, judging):
    called with a label and a total, each gives a context told how many are done."""

    @contextlib.contextmanager
    def step(label: str, total: int) -> Iterator[Advance]:
        columns = (
            TextColumn(label, markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with RichProgress(*columns, console=console, transient=True) as bar:
            task = bar.add_task(label, total=total)
            yield lambda done: bar.update(task, completed=done)

    return step
