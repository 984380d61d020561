"""The `codetrial` command: one module per command, errors mapped to exit codes; the
app and its entry point are in `codetrial.cli.app`."""

from codetrial.cli.app import build_app, main
from codetrial.cli.commands import COMMANDS

# In the order `codetrial --help` lists them.
COMMANDS.declare("run", "codetrial.cli.run")
COMMANDS.declare("ask", "codetrial.cli.ask")
COMMANDS.declare("report", "codetrial.cli.report")
COMMANDS.declare("rerun", "codetrial.cli.rerun")
COMMANDS.declare("review", "codetrial.cli.review")
COMMANDS.declare("tasks", "codetrial.cli.tasks")
COMMANDS.declare("check", "codetrial.cli.check")
COMMANDS.declare("evaluate", "codetrial.cli.evaluate")
COMMANDS.declare("compare", "codetrial.cli.compare")
COMMANDS.declare("sweep", "codetrial.cli.sweep")
COMMANDS.declare("board", "codetrial.cli.board")
COMMANDS.declare("models", "codetrial.cli.models")
COMMANDS.declare("envs", "codetrial.cli.envs")
COMMANDS.declare("harden", "codetrial.cli.harden")
COMMANDS.declare("select", "codetrial.cli.select")
COMMANDS.declare("judge-eval", "codetrial.cli.select")
COMMANDS.declare("train-ranker", "codetrial.cli.select")
COMMANDS.declare("train-judge", "codetrial.cli.select")

__all__ = ["build_app", "main"]
