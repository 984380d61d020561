"""The `codetrial` command: one module per command, errors mapped to exit codes."""

from __future__ import annotations

import sys

import typer

from codetrial.cli.ask import ask
from codetrial.cli.board import board
from codetrial.cli.check import check
from codetrial.cli.compare import compare
from codetrial.cli.envs import envs
from codetrial.cli.evaluate import evaluate
from codetrial.cli.harden import harden
from codetrial.cli.models import models
from codetrial.cli.report import report
from codetrial.cli.rerun import rerun_command
from codetrial.cli.review import review
from codetrial.cli.run import run
from codetrial.cli.select import judge_eval, select, train_judge, train_ranker
from codetrial.cli.sweep import sweep
from codetrial.cli.tasks import tasks
from codetrial.errors import CodetrialError, Interrupted
from codetrial.progress import plain_console

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Put LLM-written code on trial: gate, sandbox, contract tests, repair, report.",
)
app.command("run")(run)
app.command("ask")(ask)
app.command("report")(report)
app.command("rerun")(rerun_command)
app.command("review")(review)
app.command("tasks")(tasks)
app.command("check")(check)
app.command("evaluate")(evaluate)
app.command("compare")(compare)
app.command("sweep")(sweep)
app.command("board")(board)
app.command("models")(models)
app.command("envs")(envs)
app.command("harden")(harden)
app.command("select")(select)
app.command("judge-eval")(judge_eval)
app.command("train-ranker")(train_ranker)
app.command("train-judge")(train_judge)


def main() -> None:
    """The console script. typer reports usage errors (exit 2) and turns Ctrl-C into
    exit 130; codetrial's own errors print one line and exit with their class's code."""
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
