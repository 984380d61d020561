"""`codetrial models`: the backends and the embedded catalogue, and whether each is ready."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from codetrial.cli.commands import COMMANDS
from codetrial.cli.views import console
from codetrial.config import endpoints_from_env
from codetrial.models import KINDS
from codetrial.models.weights import EMBEDDED_MODELS, find_embedded, label


def models(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            help="embedded models to assemble with --prepare (default: the default one)",
            show_default=False,
        ),
    ] = None,
    prepare: Annotated[
        bool, typer.Option("--prepare", help="assemble and verify embedded weights")
    ] = False,
    ollama_url: Annotated[str | None, typer.Option(help="Ollama base URL")] = None,
    openai_url: Annotated[str | None, typer.Option(help="OpenAI-compatible base URL")] = None,
) -> None:
    """List model backends and the embedded models, and whether each is ready to use."""
    if names and not prepare:
        raise typer.BadParameter("names embedded models to assemble: add --prepare")
    if prepare:
        for model in [find_embedded(name) for name in names or ["embedded"]]:
            with console.status(f"assembling {model.name} ({model.size:,} bytes)"):
                path = model.prepare()
            console.print(f"{label(model)}: ready at {path}")
    endpoints = endpoints_from_env(ollama_url, openai_url)
    table = Table(title="Model backends")
    for header in ("model", "ready", "detail"):
        table.add_column(header, overflow="fold")
    for _, kind in KINDS.items():
        for state in kind.readiness(endpoints):
            table.add_row(state.name, _mark(state.ready), state.detail)
    console.print(table)
    catalogue = Table(title="Embedded models")
    for header in ("model", "file", "parameters", "bytes", "sha256", "assembled"):
        catalogue.add_column(header, overflow="fold")
    for model in EMBEDDED_MODELS.values():
        catalogue.add_row(
            label(model),
            model.filename,
            f"{model.parameters:,}",
            f"{model.size:,}",
            model.sha256,
            _mark(model.ready),
        )
    console.print(catalogue)


def _mark(ready: bool) -> Text:
    return Text("yes", style="green") if ready else Text("no", style="red")


COMMANDS.register("models", models)
