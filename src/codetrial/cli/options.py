"""Command-line options that several commands share."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from codetrial.errors import ConfigError
from codetrial.tasks.questions import requirements as read_requirements

DataFile = Annotated[
    Path | None,
    typer.Option(
        help="data file (humaneval+, mbpp, mbpp+, livecodebench, livecodebench-output, "
        "livecodebench-execution, codecontests; swe: instances JSONL) or folder (polyglot, "
        "polyglot-<language>: a checkout of the benchmark; apps, apps-calls: a JSONL or a "
        "folder)"
    ),
]
Repos = Annotated[
    Path | None,
    typer.Option(help="repository tasks: a folder of git clones named owner__name"),
]
Wheels = Annotated[
    Path | None,
    typer.Option(help="build missing package environments from these wheels, with no index"),
]
Packages = Annotated[
    str | None,
    typer.Option(help="libraries programs may import, comma-separated pip requirements"),
]
Requirements = Annotated[
    Path | None, typer.Option(help="libraries programs may import: a requirements file")
]


def packages_of(packages: str | None, requirements: Path | None) -> tuple[str, ...] | None:
    """The packages --packages or --requirements name (None when neither is given)."""
    if packages is not None and requirements is not None:
        raise ConfigError("give --packages or --requirements, not both")
    if requirements is not None:
        if not requirements.is_file():
            raise ConfigError(f"no requirements file {requirements}")
        found = read_requirements(requirements.read_text(encoding="utf-8"))
    elif packages is not None:
        # a comma starts a new requirement only before a name: numpy>=1,<2 is one
        parts = re.split(r",(?=\s*[A-Za-z])", packages)
        found = tuple(sorted(p.strip() for p in parts if p.strip()))
    else:
        return None
    if not found:
        raise ConfigError("no package named: list them, e.g. --packages numpy,pandas")
    return found


Workers = Annotated[int, typer.Option(help="parallel sandboxes")]
Timeout = Annotated[float, typer.Option(help="wall seconds per test run")]
TimeFactor = Annotated[
    float,
    typer.Option(
        help="program tasks with a reference: each case may take this times the "
        "reference's CPU time on it, measured on this machine (unless the problem states "
        "its own limit)"
    ),
]
Rules = Annotated[
    str | None,
    typer.Option(
        help="program tasks: the rules their verdicts follow, contest (a contest judge's; the "
        "default) or livecodebench (LiveCodeBench's evaluator's, for figures set beside its "
        "leaderboard)"
    ),
]
TimeFloor = Annotated[
    float, typer.Option(help="program tasks: the least CPU seconds a calibrated case may take")
]
Gate = Annotated[
    str | None,
    typer.Option(
        help="builtins-only, stdlib, program (questions), contest (programs) or off "
        "(default: the suite's)"
    ),
]
RunsDir = Annotated[Path, typer.Option(help="where run directories go")]
Efficiency = Annotated[
    bool,
    typer.Option(
        help="measure passing candidates' CPU time and memory against the tasks' references"
    ),
]
EfficiencyIfHeavy = Annotated[
    bool | None,
    typer.Option(
        "--efficiency/--no-efficiency",
        help="measure passing candidates' CPU time and memory against the tasks' references "
        "(default: when the suite's tasks have heavy inputs, as a hardened suite's do)",
        show_default=False,
    ),
]
UnsafeHostExec = Annotated[
    bool, typer.Option(help="run candidates without namespaces (rlimits only)")
]
Json = Annotated[
    bool,
    typer.Option("--json", help="print one JSON document instead of tables (progress: stderr)"),
]
Ray = Annotated[
    str | None,
    typer.Option(
        help=r"run on the Ray cluster at this address, or auto (pip install 'codetrial\[ray]')"
    ),
]
