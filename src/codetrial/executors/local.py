"""The local executor: a sweep's cells one after another in this process, each judging
in parallel as its `workers` say, and a samples file's samples in this process's pool."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

from rich.console import Console
from rich.text import Text

from codetrial.config import RunConfig
from codetrial.errors import CodetrialError, Interrupted
from codetrial.executors.base import EXECUTORS, Cell, Cells, Sample
from codetrial.gate import Profile, get_profile
from codetrial.progress import Bar, Progress, Silent
from codetrial.records import Candidate, Verdict
from codetrial.verdict.pool import JudgePool, verdict_of

# Given a cell, its place and the number of cells to run, a context that watches it.
Watch = Callable[[Cell, int, int], contextlib.AbstractContextManager[Progress]]


class Local:
    def run_cells(self, work: Cells, console: Console | None) -> None:
        """Every cell in turn, each model loaded once. A cell that fails is recorded and
        the others still run; Ctrl-C stops the sweep, keeping what finished. With a
        `console`, a line names each cell as it starts, then its run's live bar."""
        watch = _bars(console) if console else _silent
        folder = work.folder
        with contextlib.closing(work.runner()) as runner:
            for index, cell in enumerate(work.cells, start=1):
                try:
                    with watch(cell, index, len(work.cells)) as progress:
                        wall_s = runner.run(cell, folder.cells, folder.resumable(cell), progress)
                except Interrupted as exc:
                    raise Interrupted(f"{exc}\nthe sweep stopped at cell {cell.id}") from exc
                except CodetrialError as exc:
                    folder.record_failed(cell, str(exc))
                else:
                    folder.record_finished(cell, wall_s)

    def verdicts(
        self, samples: Sequence[Sample], config: RunConfig, pool: JudgePool
    ) -> Iterator[Verdict]:
        return local_verdicts(samples, pool, get_profile(config.gate_profile))


EXECUTORS.register("local", lambda address: Local())


def local_verdicts(items: Sequence[Sample], pool: JudgePool, profile: Profile) -> Iterator[Verdict]:
    """Each sample's verdict from the pool's sandboxes, in order; a sandbox fault is
    that sample's infra_error."""
    futures = [pool.submit(Candidate(code, code or None), task, profile) for _, task, code in items]
    for future in futures:
        yield verdict_of(future)


@contextlib.contextmanager
def _silent(cell: Cell, index: int, total: int) -> Iterator[Progress]:
    yield Silent()


def _bars(console: Console) -> Watch:
    @contextlib.contextmanager
    def watch(cell: Cell, index: int, total: int) -> Iterator[Progress]:
        console.print(Text.assemble((f"cell {index}/{total}", "bold"), f" {cell.label}"))
        with Bar(console) as bar:
            yield bar

    return watch
