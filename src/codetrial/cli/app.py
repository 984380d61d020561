"""The `codetrial` command: one module per command, errors mapped to exit codes."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from codetrial.cli.commands import COMMANDS
from codetrial.errors import CodetrialError, Interrupted
from codetrial.progress import plain_console


def _group() -> None:
    """Keeps the app a group of commands when it is built with one of them."""


def build_app(names: Sequence[str] | None = None) -> typer.Typer:
    """The app with the commands `names` (default: all of them), only their modules
    imported."""
    app = typer.Typer(
        no_args_is_help=True,
        add_completion=False,
        help="Put LLM-written code on trial: gate, sandbox, contract tests, repair, report.",
    )
    app.callback()(_group)
    for name in COMMANDS.names() if names is None else names:
        app.command(name)(COMMANDS.get(name))
    return app


def main() -> None:
    """The console script: a command's own module is the only one imported. typer
    reports usage errors (exit 2) and turns Ctrl-C into exit 130; codetrial's own errors
    print one line and exit with their class's code."""
    named = sys.argv[1:2]
    app = build_app(named if named and named[0] in COMMANDS else None)
    try:
        app()
    except CodetrialError as exc:
        console = plain_console(stderr=True)
        console.print("error:", style="bold red", end=" ")
        console.print(str(exc), highlight=False)
        sys.exit(exc.exit_code)
    except SystemExit as exc:
        if exc.code == Interrupted.exit_code:
            plain_console(stderr=True).print("interrupted")
        raise
