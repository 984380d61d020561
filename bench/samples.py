"""HumanEval samples files with known kinds of candidates, for the benchmarks and the
verdict-fidelity test: canonical solutions and broken variants of them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from codetrial.tasks import Task

_INTEGER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


def off_by_one(solution: str) -> str:
    """The first integer literal plus one; else the first `<` becomes `<=`."""
    found = _INTEGER.search(solution)
    if found:
        return f"{solution[: found.start()]}{int(found.group(1)) + 1}{solution[found.end() :]}"
    if "<" in solution:
        return solution.replace("<", "<=", 1)
    return "    return None\n"


VARIANTS: dict[str, Callable[[str], str]] = {
    "canonical": lambda solution: solution,
    "return_none": lambda solution: "    return None\n",
    "off_by_one": off_by_one,
    "syntax_error": lambda solution: solution + "\n    return (\n",
    "raises": lambda solution: "    raise ValueError('broken')\n",
    "return_zero": lambda solution: "    return 0\n",
    "infinite_loop": lambda solution: "    while True:\n        pass\n",
}


def canonical_solution(task: Task) -> str:
    assert task.reference is not None and task.reference.startswith(task.prompt)
    return task.reference[len(task.prompt) :]


def write_samples(path: Path, rows: list[tuple[Task, str]]) -> list[tuple[str, str]]:
    """Write {"task_id", "completion"} lines; returns (task id, variant) per line."""
    kinds = []
    with path.open("w") as handle:
        for task, variant in rows:
            completion = VARIANTS[variant](canonical_solution(task))
            handle.write(json.dumps({"task_id": task.id, "completion": completion}) + "\n")
            kinds.append((task.id, variant))
    return kinds
