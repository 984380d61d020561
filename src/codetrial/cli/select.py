"""`codetrial select`, `judge-eval` and `train-ranker`: choosing among a run's
candidates, and measuring the choosers.

The evidence comes from `codetrial.select.gather`; results go to `selection.json` /
`judge_eval.json` beside the store and into the report.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from codetrial.cli.evaluate import judged_with_progress
from codetrial.cli.options import DataFile, RunsDir, Workers
from codetrial.cli.views import console
from codetrial.errors import ConfigError
from codetrial.evaluate import SamplesJob, judge_samples, prompt_map
from codetrial.prompts import SELECTION_TEMPLATES, template_hashes
from codetrial.report import JUDGE_EVAL, SELECTION, write_reports
from codetrial.select import STRATEGIES, Need, TaskPool, compare_strategies, named, needs
from codetrial.select import learned as ranking
from codetrial.select.gather import Evidence, TestSource, gather
from codetrial.select.gather import judged as gathered_judge
from codetrial.select.judging import THRESHOLDS, calibration, quality
from codetrial.select.pools import entries
from codetrial.store import RunStore
from codetrial.store.artifacts import write_atomic
from codetrial.tasks import function_tasks

TestsFile = Annotated[
    Path | None, typer.Option(help="generated tests in CodeT's format, instead of asking")
]
TestPrompts = Annotated[
    Path | None, typer.Option(help="JSONL of {task_id, prompt} for the tests file")
]


@contextlib.contextmanager
def _progress(label: str, total: int) -> Iterator[Callable[[int], None]]:
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task(label, total=total)
        yield lambda done: progress.update(bar, completed=done)


def _gather(store: RunStore, names: Sequence[str], **how: Any) -> list[Evidence]:
    """gather(), with progress bars and a word on tasks whose tests CodeT could not use."""
    found = gather(store, names, steps=_progress, **how)
    for evidence in found:
        if evidence.unusable_tests:
            console.print(
                f"the generated tests of {', '.join(evidence.unusable_tests)} do not compile as "
                "one test function, the way CodeT runs them: codet and the ranker get no test "
                "evidence there (CodeT falls back to a random pick)",
                soft_wrap=True, highlight=False,
            )  # fmt: skip
    return found


def _source(tests: Path | None, prompts: Path | None, model: str | None = None,
            samples: int = 1) -> TestSource:  # fmt: skip
    return TestSource(tests, prompt_map(prompts) if prompts else None, model, samples)


def _names(strategies: str) -> list[str]:
    if strategies == "all":
        return STRATEGIES.names()
    names = [n.strip() for n in strategies.split(",") if n.strip()]
    needs(names)
    return names


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
    workers: Workers = 2,
    runs_dir: RunsDir = Path("runs"),
) -> None:
    """Compare selection strategies side by side on the same candidate pool."""
    names = _names(strategies)
    if pool is not None and run_dir is None:
        job = SamplesJob(pool, suite, data, prompts, workers, runs_dir=runs_dir)
        store = judged_with_progress(lambda **hooks: judge_samples(job, **hooks))
    elif run_dir is not None and pool is None:
        store = RunStore.open(run_dir)
    else:
        raise ConfigError("give either a run directory or --pool FILE")
    try:
        report: list[dict[str, Any]] = []
        hashes = template_hashes(SELECTION_TEMPLATES)
        source = _source(tests, test_prompts, test_model, test_samples)
        for evidence in _gather(
            store, names, source=source, judge=judge, shots=shots, workers=workers
        ):
            pools = evidence.pools
            usable = [n for n in names if Need.TESTS not in named(n).needs or evidence.tests]
            if "ranker" in usable:
                rows = ranking.table(pools, evidence.signals)
                scores = (
                    ranking.Ranker.load(ranker).score(rows)
                    if ranker is not None
                    else ranking.cross_validated(pools, rows)
                )
                pools = ranking.scored(pools, scores)
            results = compare_strategies(pools, usable)
            console.print(_strategy_table(evidence.model, pools, results))
            skipped = sorted(set(names) - set(usable))
            if skipped:
                console.print(f"not available without generated tests: {', '.join(skipped)}")
            report.append(
                {
                    "model": evidence.model,
                    "tasks": len(pools),
                    "candidates": sum(len(p.candidates) for p in pools),
                    "test_source": evidence.test_source,
                    "tests_unusable": evidence.unusable_tests,
                    "judge": f"{judge}, {shots}-shot" if "judge" in usable else None,
                    "ranker": str(ranker) if ranker else "cross-validated by task",
                    "prompt_sha256": hashes,
                    "strategies": [
                        {**asdict(r), "estimate": r.estimate.as_dict()} for r in results
                    ],
                }
            )
        write_atomic(store.run_dir / SELECTION, json.dumps(report, indent=1))
        console.print(f"report: {write_reports(store)}", soft_wrap=True, highlight=False)
    finally:
        store.close()


def _strategy_table(model: str, pools: Sequence[TaskPool], results: Sequence[Any]) -> Table:
    n = max(len(p.candidates) for p in pools)
    table = Table(title=f"Selection on {model}: {len(pools)} tasks, up to {n} candidates each")
    for header in ("strategy", "pass@1 % [95% CI]", "vs random", "vs first", "gap closed",
                   "p vs random", "p vs first"):  # fmt: skip
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


def judge_eval(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    judge: Annotated[str, typer.Option(help="the judge model")] = "embedded",
    shots: Annotated[
        list[int] | None, typer.Option(help="worked examples; repeat to compare (default 0 and 2)")
    ] = None,
) -> None:
    """How far a judge model can be trusted: its verdicts against the tests'."""
    store = RunStore.open(run_dir)
    try:
        tasks = function_tasks(store.tasks(), "codetrial judge-eval")
        everything = [
            e
            for model in store.manifest.config.models
            for items in entries(store, tasks, model).values()
            for e in items
            if e.record.code is not None
        ]
        (store.run_dir / "selection").mkdir(exist_ok=True)
        settings = []
        hashes = template_hashes(SELECTION_TEMPLATES)
        for count in shots or [0, 2]:
            judged = gathered_judge(store, everything, judge, count, _progress)
            pairs = [
                (judged[(e.task.id, e.record.code or "")], e.record.passed) for e in everything
            ]
            rows = [quality(pairs, t) for t in THRESHOLDS]
            console.print(_quality_table(judge, count, len(pairs), rows))
            settings.append(
                {
                    "judge": judge, "shots": count, "candidates": len(pairs),
                    "prompt_sha256": hashes,
                    "correct": sum(t for _, t in pairs),
                    "thresholds": [asdict(r) for r in rows],
                    "calibration": [asdict(b) for b in calibration(pairs)],
                }
            )  # fmt: skip
        write_atomic(store.run_dir / JUDGE_EVAL, json.dumps(settings, indent=1))
        console.print(f"report: {write_reports(store)}", soft_wrap=True, highlight=False)
    finally:
        store.close()


def _quality_table(judge: str, shots: int, n: int, rows: Sequence[Any]) -> Table:
    table = Table(title=f"Judge {judge}, {shots}-shot, on {n} candidates")
    for header in ("confidence ≥", "abstained %", "kappa", "FPR %", "FNR %",
                   "precision correct %", "precision wrong %"):  # fmt: skip
        table.add_column(header, justify="right")
    for r in rows:
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


def train_ranker(
    runs: Annotated[list[Path], typer.Argument(help="run directories to learn from")],
    out: Annotated[Path, typer.Option(help="where the ranker goes (JSON)")] = Path("ranker.json"),
    tests: TestsFile = None,
    test_prompts: TestPrompts = None,
    workers: Workers = 2,
) -> None:
    """Train a ranker on execution-labelled candidates; report how it does on tasks it
    never saw (cross-validation split by task), then fit it on everything."""
    pools: list[TaskPool] = []
    signals: list[list[ranking.Signals]] = []
    for run_dir in runs:
        store = RunStore.open(run_dir)
        try:
            for evidence in _gather(
                store, ["ranker"], source=_source(tests, test_prompts), workers=workers
            ):
                pools += evidence.pools
                signals += evidence.signals
        finally:
            store.close()
    rows = ranking.table(pools, signals)
    scored = ranking.scored(pools, ranking.cross_validated(pools, rows))
    results = compare_strategies(scored, ["random", "first", "ranker", "oracle"])
    console.print(_strategy_table("held-out tasks", scored, results))
    ranking.fit(rows, ranking.labels(pools)).save(out)
    console.print(f"ranker: {out}", soft_wrap=True, highlight=False)
