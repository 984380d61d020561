"""`codetrial select`, `judge-eval`, `train-judge` and `train-ranker`: choosing among a run's
candidates, and measuring the choosers. The work is `codetrial.select` (the API),
`codetrial.selection.measure` and the modules they use; here, options and tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

import codetrial
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import DataFile, Json, RunsDir, Workers
from codetrial.cli.views import Bar, console, out, print_json
from codetrial.errors import ConfigError
from codetrial.progress import steps
from codetrial.samples import prompt_map
from codetrial.selection import StrategyResult, TaskPool
from codetrial.selection.costs import Cost
from codetrial.selection.gather import TestSource
from codetrial.selection.measure import JudgeQuality, judge_quality
from codetrial.selection.measure import train_judge as train
from codetrial.selection.measure import train_ranker as learn
from codetrial.selection.sidebyside import strategy_names
from codetrial.selection.subsets import Arm, Baseline
from codetrial.store import RunStore

TestsFile = Annotated[
    Path | None, typer.Option(help="generated tests in CodeT's format, instead of asking")
]
TestPrompts = Annotated[
    Path | None, typer.Option(help="JSONL of {task_id, prompt} for the tests file")
]
OnlyTasks = Annotated[list[str], typer.Option("--task", help="only these task ids (repeat)")]


def _pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def select(
    run_dir: Annotated[Path | None, typer.Argument(help="a run directory")] = None,
    strategies: Annotated[str, typer.Option(help="'all' or a comma-separated list")] = "all",
    pool: Annotated[
        Path | None, typer.Option(help="a samples file from any tool, judged first")
    ] = None,
    suite: Annotated[str, typer.Option(help="the pool's suite")] = "humaneval",
    data: DataFile = None,
    prompts: Annotated[
        Path | None, typer.Option(help="JSONL of {task_id, prompt} matching the files' prompts")
    ] = None,
    tests: TestsFile = None,
    test_prompts: TestPrompts = None,
    test_model: Annotated[
        str | None, typer.Option(help="model that writes tests (default: the run's)")
    ] = None,
    test_samples: Annotated[int, typer.Option(help="test-writing requests per task")] = 1,
    judge: Annotated[str, typer.Option(help="the judge model")] = "embedded",
    shots: Annotated[int, typer.Option(help="worked examples shown to the judge")] = 0,
    ranker: Annotated[
        Path | None, typer.Option(help="a trained ranker (default: cross-validated here)")
    ] = None,
    trained_judge: Annotated[
        Path | None,
        typer.Option(help="a judge from `train-judge` (default: cross-validated here)"),
    ] = None,
    subsets: Annotated[
        str | None,
        typer.Option(help="also choose among k candidates per task, e.g. 2,5,10 (random subsets)"),
    ] = None,
    repeats: Annotated[int, typer.Option(help="random subsets per k", min=1)] = 10,
    against: Annotated[
        Path | None,
        typer.Option(help="a run whose single attempt the subsets are set against"),
    ] = None,
    workers: Workers = 2,
    runs_dir: RunsDir = Path("runs"),
    json: Json = False,
    task: OnlyTasks = [],  # noqa: B006
) -> None:
    """Compare selection strategies side by side on the same candidate pool."""
    strategy_names(strategies)  # a typo is named before a pool is judged
    if pool is not None and run_dir is None:
        with Bar(out(json)) as bar:
            run: codetrial.Run | Path = codetrial.evaluate(
                pool,
                suite,
                data=data,
                prompts=prompts,
                workers=workers,
                runs_dir=runs_dir,
                progress=bar,
            )
    elif run_dir is not None and pool is None:
        run = run_dir
    else:
        raise ConfigError("give either a run directory or --pool FILE")
    result = codetrial.select(
        run,
        strategies,
        tests=tests,
        test_prompts=test_prompts,
        test_model=test_model,
        test_samples=test_samples,
        judge_model=judge,
        shots=shots,
        ranker=ranker,
        trained_judge=trained_judge,
        subsets=_sizes(subsets),
        repeats=repeats,
        against=against,
        workers=workers,
        progress=True,
        task_ids=task,
    )
    if json:
        print_json(result.as_dicts())
        return
    for selection in result.models:
        _unusable(selection.tests_unusable)
        console.print(_strategy_table(selection.model, selection.pools, selection.strategies))
        for arm in selection.arms:
            console.print(_arm_table(selection.model, arm, selection.baseline))
        if selection.unavailable:
            console.print(
                f"not available without generated tests: {', '.join(selection.unavailable)}"
            )
    console.print(f"report: {result.run.path / 'report.html'}", soft_wrap=True, highlight=False)


def _sizes(text: str | None) -> list[int]:
    if text is None:
        return []
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ConfigError(f"--subsets takes candidate counts, e.g. 2,5,10; not {text!r}")
    return sizes


def _arm_table(model: str, arm: Arm, against: Baseline | None) -> Table:
    title = (
        f"Selection on {model} from {arm.size} candidates per task, {arm.repeats} random "
        f"subsets: {arm.cost.tokens:.0f} tokens, {arm.cost.seconds:.1f} s to generate per "
        "task"
    )
    if against is not None:
        title += (
            f"; baseline {against.label}: {against.estimate}, {against.cost.tokens:.0f} "
            f"tokens, {against.cost.seconds:.1f} s"
        )
    table = Table(title=title)
    headers = ["strategy", "pass@1 % [95% CI]", "vs random", "p vs random", "selecting a task"]
    if against is not None:
        headers += ["vs baseline", "p vs baseline"]
    for header in headers:
        table.add_column(header, justify="left" if header == "strategy" else "right")
    for r in arm.results:
        row = [
            r.name,
            str(r.estimate).replace("%", ""),
            _pct(r.gain_over_random, signed=True),
            f"{r.p_vs_random:.3g}",
            _spent(arm.selection[r.name]),
        ]
        if against is not None:
            gain, p = arm.vs_baseline[r.name]
            row += [_pct(gain, signed=True), f"{p:.3g}"]
        table.add_row(*row)
    return table


def _spent(cost: Cost | None) -> str:
    """What a strategy's evidence cost a task on top of generation."""
    if cost is None:
        return "not measured"
    return f"{cost.seconds:.1f} s" + (f", {cost.tokens:.0f} tokens" if cost.tokens else "")


def _unusable(tasks: Sequence[str]) -> None:
    if tasks:
        console.print(
            f"the generated tests of {', '.join(tasks)} do not compile as one test function, "
            "the way CodeT runs them: codet and the ranker get no test evidence there "
            "(CodeT falls back to a random pick)",
            soft_wrap=True,
            highlight=False,
        )


def _strategy_table(
    model: str, pools: Sequence[TaskPool], results: Sequence[StrategyResult]
) -> Table:
    n = max(len(p.candidates) for p in pools)
    table = Table(title=f"Selection on {model}: {len(pools)} tasks, up to {n} candidates each")
    for header in (
        "strategy",
        "pass@1 % [95% CI]",
        "vs random",
        "vs first",
        "gap closed",
        "p vs random",
        "p vs first",
    ):
        table.add_column(header, justify="left" if header == "strategy" else "right")
    for r in results:
        table.add_row(
            r.name,
            str(r.estimate).replace("%", ""),
            _pct(r.gain_over_random, signed=True),
            _pct(r.gain_over_first, signed=True),
            _pct(r.gap_closed),
            f"{r.p_vs_random:.3g}",
            f"{r.p_vs_first:.3g}",
        )
    return table


PerTask = Annotated[
    int | None,
    typer.Option(help="the first N candidates with code of each task (default: all)", min=1),
]


def judge_eval(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    judge: Annotated[str, typer.Option(help="the judge model")] = "embedded",
    shots: Annotated[
        list[int] | None, typer.Option(help="worked examples; repeat to compare (default 0 and 2)")
    ] = None,
    train: Annotated[
        bool | None,
        typer.Option(
            "--train/--no-train",
            help="also judges trained on the model's hidden states, measured out-of-fold "
            "(default: when the judge shows them)",
        ),
    ] = None,
    trained_judge: Annotated[
        Path | None, typer.Option(help="also measure a judge saved by `train-judge`")
    ] = None,
    per_task: PerTask = None,
    centre: Annotated[
        bool,
        typer.Option(help="also judges trained on states centred on each task, out-of-fold"),
    ] = False,
    task: OnlyTasks = [],  # noqa: B006
    json: Json = False,
) -> None:
    """How far a judge model can be trusted: its verdicts against the tests', asked
    zero- and few-shot and trained on execution labels, on the same candidates, with
    every false positive and false negative listed for a person to sort by cause."""
    with RunStore.open(run_dir) as store:
        found = judge_quality(
            store,
            judge,
            shots=[0, 2] if shots is None else shots,
            steps=steps(out(json)),
            train=train,
            trained_judge=trained_judge,
            per_task=per_task,
            centre=centre,
            task_ids=task,
        )
    report = codetrial.open_run(run_dir).report()
    if json:
        print_json([setting.as_dict() for setting in found])
        return
    for setting in found:
        console.print(_quality_table(setting))
        if setting.errors:
            console.print(_errors_table(setting))
    console.print(f"report: {report}", soft_wrap=True, highlight=False)


def _errors_table(setting: JudgeQuality) -> Table:
    table = Table(title=f"What {setting.setting} got wrong (P(correct) ≥ 0.5 is judged correct)")
    for header in ("task", "model", "sample", "error", "P(correct)", "outcome", "first failure"):
        table.add_column(header, no_wrap=header == "task", overflow="fold")
    for e in setting.errors:
        table.add_row(
            e.task_id,
            e.model,
            str(e.sample),
            e.kind,
            f"{e.p_correct:.2f}",
            e.outcome,
            e.first_failure,
        )
    return table


def _quality_table(setting: JudgeQuality) -> Table:
    area, within = (
        "n/a" if value is None else f"{value:.2f}" for value in (setting.auc, setting.task_auc)
    )
    table = Table(
        title=f"Judge {setting.judge}, {setting.setting}, on {setting.candidates} "
        f"candidates ({setting.correct} correct), ROC AUC {area}, within a task "
        f"{within} (tasks with both kinds: {setting.tasks_with_both})"
    )
    for header in (
        "confidence ≥",
        "abstained %",
        "kappa",
        "FPR %",
        "FNR %",
        "precision correct %",
        "precision wrong %",
    ):
        table.add_column(header, justify="right")
    for r in setting.thresholds:
        table.add_row(
            f"{r.threshold:.2f}",
            _pct(r.abstained),
            "n/a" if r.kappa is None else f"{r.kappa:.2f}",
            _pct(r.false_positive_rate),
            _pct(r.false_negative_rate),
            _pct(r.precision_correct),
            _pct(r.precision_wrong),
        )
    return table


def train_judge(
    runs: Annotated[list[Path], typer.Argument(help="run directories to learn from")],
    judge: Annotated[str, typer.Option(help="the model whose hidden states it reads")] = (
        "embedded"
    ),
    out_file: Annotated[Path, typer.Option("--out", help="where the judge goes (JSON)")] = Path(
        "judge.json"
    ),
    per_task: PerTask = None,
    centre: Annotated[
        bool,
        typer.Option(help="train on states centred on each task: what sets its candidates apart"),
    ] = False,
    task: OnlyTasks = [],  # noqa: B006
) -> None:
    """Train a judge on execution-labelled candidates: a classifier on the judge model's
    hidden states over the judge prompt, binary and three-class (correct, execution
    error, wrong output). Reports both on tasks they never saw, then fits them on
    everything."""
    measured = train(
        runs,
        out_file,
        judge=judge,
        per_task=per_task,
        steps=steps(console),
        centre=centre,
        task_ids=task,
    )
    for setting in measured:
        console.print(_quality_table(setting))
    console.print(f"trained judge: {out_file}", soft_wrap=True, highlight=False)


def train_ranker(
    runs: Annotated[list[Path], typer.Argument(help="run directories to learn from")],
    out_file: Annotated[Path, typer.Option("--out", help="where the ranker goes (JSON)")] = Path(
        "ranker.json"
    ),
    tests: TestsFile = None,
    test_prompts: TestPrompts = None,
    workers: Workers = 2,
) -> None:
    """Train a ranker on execution-labelled candidates; report how it does on tasks it
    never saw (cross-validation split by task), then fit it on everything."""
    source = TestSource(tests, prompt_map(test_prompts) if test_prompts else None)
    trained = learn(runs, out_file, source, workers, steps(console))
    _unusable(trained.tests_unusable)
    console.print(_strategy_table("held-out tasks", trained.pools, trained.results))
    console.print(f"ranker: {out_file}", soft_wrap=True, highlight=False)


COMMANDS.register("select", select)
COMMANDS.register("judge-eval", judge_eval)
COMMANDS.register("train-ranker", train_ranker)
COMMANDS.register("train-judge", train_judge)
