"""`codetrial select`, `judge-eval` and `train-ranker`: choosing among a run's
candidates, and measuring the choosers.

Evidence (generated tests, their results, outputs, judge probabilities) is cached in
the run's `selection/` folder, so a second look costs nothing. Results go to
`selection.json` / `judge_eval.json` beside the store and into the report.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from codetrial.cli.evaluate import CPU_S, TIMEOUT_S, judge_samples, prompt_map
from codetrial.cli.options import DataFile, Workers
from codetrial.cli.views import console
from codetrial.errors import ConfigError
from codetrial.models import Backend, create_backend
from codetrial.prompts import SELECTION_TEMPLATES, template_hashes
from codetrial.records import GenerationOptions
from codetrial.report import JUDGE_EVAL, SELECTION, write_reports
from codetrial.select import STRATEGIES, TaskPool, compare_strategies, named
from codetrial.select import learned as ranking
from codetrial.select.evidence import Entry, execute
from codetrial.select.generated import load_generated_tests, runs_as_one, write_tests
from codetrial.select.judging import THRESHOLDS, calibration, judge_entries, quality
from codetrial.select.pools import build, entries, run_tasks
from codetrial.store import RunStore
from codetrial.store.artifacts import slug, write_atomic
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool

TestsFile = Annotated[
    Path | None, typer.Option(help="generated tests in CodeT's format, instead of asking")
]
TestPrompts = Annotated[
    Path | None, typer.Option(help="JSONL of {task_id, prompt} for the tests file")
]
NEEDS_TESTS = {"codet", "consensus", "ranker"}
NEEDS_OUTPUTS = {"consensus", "ranker"}


def _progress(label: str, total: int) -> tuple[Progress, Callable[[int], None]]:
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    progress = Progress(*columns, console=console, transient=True)
    bar = progress.add_task(label, total=total)
    return progress, lambda done: progress.update(bar, completed=done)


def _options(store: RunStore) -> GenerationOptions:
    """The run's own conditions, greedy: tests and verdicts should not be sampled."""
    return dataclasses.replace(store.manifest.config.options(), temperature=0.0)


def _backend(name: str, store: RunStore, role: str) -> Backend:
    if name.startswith("samples/"):
        raise ConfigError(
            f"the {role} must be a model codetrial can run, not the samples file {name}; "
            f"pass one, e.g. --{role}-model embedded"
        )
    return create_backend(name, store.manifest.config.endpoints)


@dataclass(frozen=True)
class Evidence:
    model: str
    tests: dict[str, list[str]]
    pools: list[TaskPool]
    signals: list[list[ranking.Signals]]
    test_source: str
    unusable_tests: list[str]


def _tests(
    store: RunStore,
    model: str,
    tasks: list[Task],
    tests_file: Path | None,
    prompts: Path | None,
    test_model: str | None,
    test_samples: int,
) -> tuple[dict[str, list[str]], str]:
    """Generated tests per task: from a file, from the cache, or written now."""
    if tests_file is not None:
        found = load_generated_tests(
            tests_file, tasks, prompt_map(prompts) if prompts else {t.prompt: t.id for t in tasks}
        )
        return found, f"file {tests_file}"
    cache = store.run_dir / "selection" / f"tests-{slug(test_model or model)}-{test_samples}.json"
    if cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8")), f"model {test_model or model}"
    backend = _backend(test_model or model, store, "test")
    written: dict[str, list[str]] = {}
    progress, advance = _progress("writing tests", len(tasks))
    try:
        with progress:
            for done, task in enumerate(tasks, 1):
                written[task.id] = write_tests(backend, task, _options(store), test_samples)
                advance(done)
    finally:
        backend.close()
    write_atomic(cache, json.dumps(written))
    return written, f"model {test_model or model}"


def gather(
    store: RunStore,
    names: Sequence[str],
    *,
    tests_file: Path | None = None,
    prompts: Path | None = None,
    test_model: str | None = None,
    test_samples: int = 1,
    judge: str = "embedded",
    shots: int = 0,
    workers: int = 2,
) -> list[Evidence]:
    """For each model of the run: its pools, with the evidence `names` need."""
    tasks = run_tasks(store)
    folder = store.run_dir / "selection"
    folder.mkdir(exist_ok=True)
    gathered = []
    for model in store.manifest.config.models:
        by_task = entries(store, tasks, model)
        everything = [e for items in by_task.values() for e in items]
        tests: dict[str, list[str]] = {}
        source = "none"
        if NEEDS_TESTS & set(names):
            tests, source = _tests(
                store, model, tasks, tests_file, prompts, test_model, test_samples
            )
        executions = {}
        if tests:
            config = store.manifest.config
            pool = JudgePool(workers, config.limits, config.unsafe_host_exec)
            progress, advance = _progress("running generated tests", len(everything))
            try:
                with progress:
                    executions = execute(
                        everything, tests, pool, folder / f"executions-{slug(model)}.json",
                        outputs=bool(NEEDS_OUTPUTS & set(names)), progress=advance,
                    )  # fmt: skip
            finally:
                pool.close()
        judged: dict[tuple[str, str], float] = {}
        if "judge" in names:
            judged = _judged(store, everything, judge, shots)
        unusable = sorted(t for t, found in tests.items() if found and not runs_as_one(set(found)))
        if unusable:
            console.print(
                f"the generated tests of {', '.join(unusable)} do not compile as one test "
                "function, the way CodeT runs them: codet and the ranker get no test evidence "
                "there (CodeT falls back to a random pick)",
                soft_wrap=True, highlight=False,
            )  # fmt: skip
        pools, signals = build(by_task, tests, executions, judged, unusable)
        gathered.append(Evidence(model, tests, pools, signals, source, unusable))
    return gathered


def _judged(
    store: RunStore, everything: list[Entry], judge: str, shots: int
) -> dict[tuple[str, str], float]:
    cache = store.run_dir / "selection" / f"judge-{slug(judge)}-{shots}shot.json"
    backend = _backend(judge, store, "judge")
    progress, advance = _progress(f"judging ({judge}, {shots}-shot)", len(everything))
    try:
        with progress:
            return judge_entries(backend, everything, _options(store), shots, cache, advance)
    finally:
        backend.close()


def _names(strategies: str) -> list[str]:
    if strategies == "all":
        return list(STRATEGIES)
    names = [n.strip() for n in strategies.split(",") if n.strip()]
    for name in names:
        named(name)
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
    runs_dir: Annotated[Path, typer.Option(help="where a pool's run directory goes")] = Path(
        "runs"
    ),
) -> None:
    """Compare selection strategies side by side on the same candidate pool."""
    names = _names(strategies)
    if pool is not None and run_dir is None:
        store = judge_samples(
            pool, suite, data, prompts, workers, TIMEOUT_S, CPU_S, None, runs_dir, False
        )
    elif run_dir is not None and pool is None:
        store = RunStore.open(run_dir)
    else:
        raise ConfigError("give either a run directory or --pool FILE")
    try:
        report: list[dict[str, Any]] = []
        hashes = template_hashes(SELECTION_TEMPLATES)
        for evidence in gather(
            store, names, tests_file=tests, prompts=test_prompts, test_model=test_model,
            test_samples=test_samples, judge=judge, shots=shots, workers=workers,
        ):  # fmt: skip
            pools = evidence.pools
            usable = [n for n in names if n not in NEEDS_TESTS or evidence.tests]
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
        tasks = run_tasks(store)
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
            judged = _judged(store, everything, judge, count)
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
            for evidence in gather(
                store, ["ranker"], tests_file=tests, prompts=test_prompts, workers=workers
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
