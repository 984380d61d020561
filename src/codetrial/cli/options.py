"""Command-line options that several commands share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DataFile = Annotated[Path | None, typer.Option(help="data file for humaneval+/mbpp/mbpp+")]
Workers = Annotated[int, typer.Option(help="parallel sandboxes")]
