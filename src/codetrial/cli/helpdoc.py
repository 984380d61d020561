"""docs/commands.md, written from the commands' own help:
`python -m codetrial.cli.helpdoc > docs/commands.md` (what `make docs` runs).

The help is the plain text typer prints without rich, at a fixed width, never the
terminal's panels, so the page is the same whatever terminal, width or colour settings
it is written from.
"""

from __future__ import annotations

import typer
import typer.core

from codetrial.cli.app import build_app

WIDTH = 100

Command = typer.core.TyperCommand | typer.core.TyperGroup


def _command(command: object) -> Command:
    """`command`, which every command of the app is, typed as a typer command."""
    assert isinstance(command, Command)
    return command


def _help(command: Command, context: typer.Context) -> str:
    """`command`'s help as `codetrial ... --help` prints it without rich, at WIDTH."""
    command.rich_markup_mode = None
    return command.get_help(context).rstrip()


def commands_md() -> str:
    """The whole page: a table of the commands with their one-line summaries, then each
    command's full help, in the order the commands are registered."""
    group = typer.main.get_command(build_app())
    assert isinstance(group, typer.core.TyperGroup)
    root = typer.Context(
        group, info_name="codetrial", terminal_width=WIDTH, max_content_width=WIDTH
    )
    commands = {name: _command(group.commands[name]) for name in group.list_commands(root)}
    lines = [
        "# Commands",
        "",
        "<!-- Written by `python -m codetrial.cli.helpdoc` (`make docs`) from the commands'",
        "     own help; edit the help in src/codetrial/cli/, not this page. -->",
        "",
        "Every command's options, as `codetrial COMMAND --help` prints them. What the",
        "commands are for, with links to the pages that explain them, is in",
        "[running.md](running.md).",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for name, command in commands.items():
        summary = command.get_short_help_str(limit=1000).replace("|", "\\|")
        lines.append(f"| [`{name}`](#codetrial-{name}) | {summary} |")
    lines += ["", "## codetrial", "", "```text", _help(group, root), "```"]
    for name, command in commands.items():
        context = typer.Context(command, info_name=name, parent=root)
        lines += ["", f"## codetrial {name}", "", "```text", _help(command, context), "```"]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the page."""
    print(commands_md(), end="")


if __name__ == "__main__":
    main()
