"""The `codetrial` command: one module per command, errors mapped to exit codes."""

from __future__ import annotations

import sys

import typer

from codetrial.cli import (
    ask,
    board,
    check,
    compare,
    envs,
    evaluate,
    harden,
    models,
    report,
    rerun,
    review,
    run,
    select,
    sweep,
    tasks,
)
from codetrial.errors import CodetrialError, Interrupted
from codetrial.progress import plain_console

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Put LLM-written code on trial: gate, sandbox, contract tests, repair, report.",
)
app.command("run")(run.run)
app.command("ask")(ask.ask)
app.command("report")(report.report)
app.command("rerun")(rerun.rerun_command)
app.command("review")(review.review)
app.command("tasks")(tasks.tasks)
app.command("check")(check.check)
app.command("evaluate")(evaluate.evaluate)
app.command("compare")(compare.compare)
app.command("sweep")(sweep.sweep)
app.command("board")(board.board)
app.command("models")(models.models)
app.command("envs")(envs.envs)
app.command("harden")(harden.harden)
app.command("select")(select.select)
app.command("judge-eval")(select.judge_eval)
app.command("train-ranker")(select.train_ranker)
app.command("train-judge")(select.train_judge)


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
