"""codetrial: put LLM-written code on trial before anyone relies on it.

The public API (the command line is a thin layer over it)::

    import codetrial

    run = codetrial.run("contracts10", ["embedded"])        # a trial, stored
    run = codetrial.evaluate("samples.jsonl")                # another tool's samples
    verdict = codetrial.judge(code, task)                    # one candidate
    chosen = codetrial.select(run, "random,likelihood")      # selection strategies
    run = codetrial.open_run("runs/...")                     # a stored run
    result = codetrial.run_sweep("nightly.toml")             # a grid of runs
    board = codetrial.board(["sweeps/nightly"])              # a leaderboard of runs
    queue = codetrial.review("runs/...")                     # what still fails, for a person

Names are imported when first used, so `import codetrial` loads nothing else.
"""

import importlib as _importlib
import typing as _typing

_HOMES = {
    "__version__": "codetrial.version",
    "run": "codetrial.api",
    "ask": "codetrial.api",
    "configure": "codetrial.api",
    "run_sweep": "codetrial.sweep",
    "plan_sweep": "codetrial.sweep",
    "board": "codetrial.report.board",
    "write_board": "codetrial.report.board",
    "evaluate": "codetrial.api",
    "judge": "codetrial.api",
    "Judge": "codetrial.api",
    "select": "codetrial.api",
    "SelectionResult": "codetrial.api",
    "compare": "codetrial.api",
    "review": "codetrial.api",
    "decide": "codetrial.api",
    "load_tasks": "codetrial.api",
    "open_run": "codetrial.runs",
    "Run": "codetrial.runs",
    "ModelSelection": "codetrial.selection.sidebyside",
    "Comparison": "codetrial.report.compare",
    "Progress": "codetrial.progress",
    "Verdict": "codetrial.records",
    "Outcome": "codetrial.records",
    "TaskResult": "codetrial.records",
    "AttemptRecord": "codetrial.records",
    "TestResult": "codetrial.records",
    "Task": "codetrial.tasks",
    "Estimate": "codetrial.metrics",
    "CodetrialError": "codetrial.errors",
}
__all__ = [
    "AttemptRecord",
    "CodetrialError",
    "Comparison",
    "Estimate",
    "Judge",
    "ModelSelection",
    "Outcome",
    "Progress",
    "Run",
    "SelectionResult",
    "Task",
    "TaskResult",
    "TestResult",
    "Verdict",
    "ask",
    "board",
    "compare",
    "configure",
    "decide",
    "evaluate",
    "judge",
    "load_tasks",
    "open_run",
    "plan_sweep",
    "review",
    "run",
    "run_sweep",
    "select",
    "write_board",
]

if _typing.TYPE_CHECKING:
    from codetrial.api import (
        Judge,
        SelectionResult,
        compare,
        configure,
        decide,
        evaluate,
        judge,
        load_tasks,
        review,
        run,
        select,
    )
    from codetrial.errors import CodetrialError
    from codetrial.metrics import Estimate
    from codetrial.progress import Progress
    from codetrial.records import AttemptRecord, Outcome, TaskResult, TestResult, Verdict
    from codetrial.report.board import board, write_board
    from codetrial.report.compare import Comparison
    from codetrial.runs import Run, open_run
    from codetrial.selection.sidebyside import ModelSelection
    from codetrial.sweep import plan_sweep, run_sweep
    from codetrial.tasks import Task
    from codetrial.version import __version__ as __version__


def __getattr__(name: str) -> _typing.Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'codetrial' has no attribute {name!r}")
    value = getattr(_importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
