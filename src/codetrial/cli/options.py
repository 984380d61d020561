"""Command-line options that several commands share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DataFile = Annotated[
    Path | None,
    typer.Option(
        help="data file (humaneval+, mbpp, mbpp+, swe: instances JSONL) or folder (polyglot-python)"
    ),
]
Repos = Annotated[
    Path | None,
    typer.Option(help="repository tasks: a folder of git clones named owner__name"),
]
Wheels = Annotated[
    Path | None,
    typer.Option(help="repository tasks: build missing package environments from these wheels"),
]
Workers = Annotated[int, typer.Option(help="parallel sandboxes")]
Timeout = Annotated[float, typer.Option(help="wall seconds per test run")]
Gate = Annotated[
    str | None, typer.Option(help="builtins-only, stdlib or off (default: the suite's)")
]
RunsDir = Annotated[Path, typer.Option(help="where run directories go")]
Efficiency = Annotated[
    bool,
    typer.Option(
        help="measure passing candidates' CPU time and memory against the tasks' references"
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
        help="run on the Ray cluster at this address, or auto (pip install 'codetrial[ray]')"
    ),
]
