"""The leaderboard over many runs: one row per model and set of conditions on each
suite, seeds pooled, ranked by pass@1, each row tested against the one above it.

Runs are pooled into a row only when every condition that moves a score is the same:
the model's identity, the prompts, the gate, the edit format, the limits, the
sampling, the repair budget and the very tasks. Seeds and the number of samples may
differ (they are what pooling is for). Rows of one suite that differ in a condition
carry it beside their name, so no two conditions ever share a row unseen.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from codetrial.config import RULES
from codetrial.errors import ConfigError, StoreError
from codetrial.metrics import Estimate, bootstrap, mcnemar_exact
from codetrial.report.charts import shown_size, size_vs_score
from codetrial.report.document import render
from codetrial.report.summary import Integrity
from codetrial.store import RunStore, find_runs
from codetrial.store.artifacts import write_atomic

_IDENTITY = ("model", "tag", "digest", "file_sha256")  # what names the weights themselves
_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}  # as parse_size reads them


def parse_size(text: str) -> float | None:
    """A parameter count as backends and leaderboards write it: 494032768, 7e9,
    494.03M, 1.5B, 7b; None for anything else."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([KMBT]?)\s*", text, re.IGNORECASE)
    return float(match[1]) * _UNITS[match[2].upper()] if match else None


@dataclass(frozen=True)
class Entry:
    """One model's results in one run. `tasks`: task id and digest -> how many of its
    samples passed on the first attempt, and after repair, of how many; `integrity`:
    the counts over all its attempts, its tokens at the price the run recorded."""

    run_dir: Path
    model: str
    suite: str
    seed: int
    conditions: dict[str, str]
    parameters: float | None
    tasks: dict[str, tuple[int, int, int]]
    completion_tokens: int
    generation_s: float
    execution_s: float
    memory_kb: int | None
    integrity: Integrity

    @property
    def pass_rate(self) -> float:
        return statistics.fmean(first / n for n, first, _ in self.tasks.values())


def _conditions(store: RunStore, model: str, ran: Sequence[str]) -> dict[str, str]:
    """What moves a score, as text; `ran`: the tasks (id@digest) the model answered,
    so that a run stopped half-way is no run of the whole suite."""
    manifest, config = store.manifest, store.manifest.config
    backend = manifest.backends.get(model, {})
    digest = hashlib.sha256(
        json.dumps([manifest.prompt_sha256, manifest.system_prompt], sort_keys=True).encode()
    ).hexdigest()
    limits = config.limits
    return {
        "weights": " ".join(f"{k} {backend[k]}" for k in _IDENTITY if backend.get(k)),
        "prompt": digest[:8],
        "gate": config.gate_profile,
        "edit format": config.edit_format or "",
        "rules": "" if config.rules in (None, RULES[0]) else config.rules,
        "limits": f"{limits.timeout_s:g} s wall, {limits.cpu_s} s CPU, {limits.memory_mb} MB",
        "isolation": manifest.isolation,
        "temperature": f"{config.temperature:g}",
        "repair attempts": str(config.repair_attempts),
        "max tokens": str(config.max_tokens),
        "context": str(config.num_ctx),
        "think": "on" if config.think else "off",
        "tasks": f"{len(ran)} ({hashlib.sha256(' '.join(sorted(ran)).encode()).hexdigest()[:8]})",
    }


def entries(run_dir: Path, sizes: Mapping[str, float]) -> list[Entry]:
    """One Entry per model with results in the run; `sizes` overrides parameter counts."""
    found = []
    with RunStore.open(run_dir) as store:
        manifest = store.manifest
        results = store.task_results()
        attempts = [a for r in results for a in r.attempts]
        for model, label in [
            (m, x) for m in manifest.config.models for x in manifest.config.labels_of(m)
        ]:
            mine = [r for r in results if r.model == label]
            if not mine:
                continue
            tasks: dict[str, tuple[int, int, int]] = {}
            for r in mine:
                key = f"{r.task_id}@{manifest.task_sha256.get(r.task_id, '')[:12]}"
                n, first, after = tasks.get(key, (0, 0, 0))
                tasks[key] = (n + 1, first + r.first.passed, after + r.passed_after_repair)
            used = [a for a in attempts if a.label == label]
            memory = [a.model_memory_kb for a in used if a.model_memory_kb is not None]
            declared = manifest.backends.get(model, {}).get("parameters", "")
            size = sizes.get(model, parse_size(declared))
            found.append(
                Entry(
                    run_dir=run_dir,
                    model=label,
                    suite=manifest.config.suite,
                    seed=manifest.config.seed,
                    conditions=_conditions(store, model, list(tasks)),
                    parameters=size,
                    tasks=tasks,
                    completion_tokens=sum(a.completion_tokens or 0 for a in used),
                    generation_s=sum(a.generation_s for a in used),
                    execution_s=sum(a.execution_s for a in used),
                    memory_kb=max(memory) if memory else None,
                    integrity=Integrity.of(used, manifest.config.prices),
                )
            )
    return found


@dataclass(frozen=True)
class Paired:
    """This row against the one ranked above it, on the tasks both ran: tasks the row
    above did better on, worse on, and the exact sign test (McNemar's, with one sample
    per task) over them."""

    tasks: int
    above_better: int
    above_worse: int

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.above_better, self.above_worse)


@dataclass(frozen=True)
class Row:
    model: str
    suite: str
    conditions: dict[str, str]
    entries: list[Entry]
    differs: dict[str, str] = field(default_factory=dict)
    paired: Paired | None = None

    def _rates(self, index: int) -> dict[str, float]:
        pooled: dict[str, list[int]] = {}
        for entry in self.entries:
            for task, counts in entry.tasks.items():
                n, passed = pooled.get(task, [0, 0])
                pooled[task] = [n + counts[0], passed + counts[index]]
        return {task: passed / n for task, (n, passed) in pooled.items()}

    @cached_property
    def rates(self) -> dict[str, float]:
        """Each task's first-attempt pass rate over every sample of every run."""
        return self._rates(1)

    @cached_property
    def pass_at_1(self) -> Estimate:
        return bootstrap(list(self.rates.values()))

    @cached_property
    def after_repair(self) -> Estimate:
        return bootstrap(list(self._rates(2).values()))

    @property
    def seeds(self) -> list[int]:
        return sorted({e.seed for e in self.entries})

    @property
    def over_seeds(self) -> tuple[float, float] | None:
        """Mean and standard deviation over seeds of pass@1 (the runs of one seed
        averaged first), when several seeds ran."""
        if len(self.seeds) < 2:
            return None
        values = [
            statistics.fmean(e.pass_rate for e in self.entries if e.seed == seed)
            for seed in self.seeds
        ]
        return statistics.fmean(values), statistics.stdev(values)

    @property
    def parameters(self) -> float | None:
        return self.entries[0].parameters

    @property
    def tokens_per_s(self) -> float | None:
        seconds = sum(e.generation_s for e in self.entries)
        tokens = sum(e.completion_tokens for e in self.entries)
        return tokens / seconds if seconds and tokens else None

    @property
    def seconds_per_sample(self) -> float:
        """Generation and judging seconds per sample (a task's try and its repairs)."""
        chains = sum(n for e in self.entries for n, _, _ in e.tasks.values())
        return sum(e.generation_s + e.execution_s for e in self.entries) / chains

    @property
    def memory_mb(self) -> float | None:
        memory = [e.memory_kb for e in self.entries if e.memory_kb is not None]
        return max(memory) / 1024 if memory else None

    @cached_property
    def integrity(self) -> Integrity:
        return Integrity.pooled(e.integrity for e in self.entries)

    @property
    def variant(self) -> str:
        """The conditions that set this row apart from others of its suite."""
        return ", ".join(f"{k} {v or 'none'}" for k, v in self.differs.items())

    @property
    def label(self) -> str:
        return f"{self.model} ({self.variant})" if self.variant else self.model


@dataclass(frozen=True)
class Board:
    runs: list[Path]
    suites: dict[str, list[Row]]  # suite -> rows, best first

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(row.model for rows in self.suites.values() for row in rows))

    def as_dict(self) -> dict[str, object]:
        return {
            "runs": [str(p) for p in self.runs],
            "suites": {suite: [_row_dict(r) for r in rows] for suite, rows in self.suites.items()},
        }


def _row_dict(row: Row) -> dict[str, object]:
    seeds = row.over_seeds
    return {
        "model": row.model,
        "label": row.label,
        "differs": row.differs,
        "conditions": row.conditions,
        "runs": [str(e.run_dir) for e in row.entries],
        "seeds": row.seeds,
        "tasks": len(row.rates),
        "pass@1": row.pass_at_1.as_dict(),
        "after_repair": row.after_repair.as_dict(),
        "over_seeds": {"mean": seeds[0], "sd": seeds[1]} if seeds else None,
        "parameters": row.parameters,
        "tokens_per_s": row.tokens_per_s,
        "seconds_per_sample": row.seconds_per_sample,
        "model_memory_mb": row.memory_mb,
        **asdict(row.integrity),
        "paired_with_above": None
        if row.paired is None
        else {
            "tasks": row.paired.tasks,
            "above_better": row.paired.above_better,
            "above_worse": row.paired.above_worse,
            "p": row.paired.p_value,
        },
    }


def _ranked(rows: list[Row]) -> list[Row]:
    """Best pass@1 first; each row tested against the one above; the conditions that
    differ among the suite's rows written beside each."""
    rows = sorted(rows, key=lambda r: (-r.pass_at_1.value, r.model))
    varying = [k for k in rows[0].conditions if len({r.conditions[k] for r in rows}) > 1]
    # Different models have different weights; the same model's weights differing is news.
    reweighed = {
        m
        for m in {r.model for r in rows}
        if len({r.conditions["weights"] for r in rows if r.model == m}) > 1
    }
    ranked: list[Row] = []
    for row in rows:
        paired = None
        if ranked:
            above, mine = ranked[-1].rates, row.rates
            shared = [t for t in mine if t in above]
            paired = Paired(
                len(shared),
                sum(above[t] > mine[t] for t in shared),
                sum(above[t] < mine[t] for t in shared),
            )
        differs = {
            k: row.conditions[k] for k in varying if k != "weights" or row.model in reweighed
        }
        ranked.append(Row(row.model, row.suite, row.conditions, row.entries, differs, paired))
    return ranked


def board(places: Iterable[Path | str], sizes: Mapping[str, str] | None = None) -> Board:
    """The board of every run found in `places` (run directories, sweeps, folders of
    runs); `sizes`: model -> parameter count for backends that do not say it."""
    counts: dict[str, float] = {}
    for model, text in (sizes or {}).items():
        if (value := parse_size(text)) is None:
            raise ConfigError(f"--size {model}={text}: write the count as 1.5B, 494M or 7e9")
        counts[model] = value
    folders = [Path(place) for place in places]
    missing = [str(place) for place in folders if not place.exists()]
    if missing:
        raise ConfigError(f"no such folder: {', '.join(missing)}")
    runs = find_runs(folders)
    if not runs:
        raise ConfigError(
            "no run directory found there: pass run directories, a sweep's folder or a "
            "folder of runs (each run holds a manifest.json)"
        )
    groups: dict[tuple[str, str, str], list[Entry]] = {}
    for run_dir in runs:
        try:
            found = entries(run_dir, counts)
        except StoreError as exc:
            raise StoreError(f"{exc}\n(or leave {run_dir} out of the board)") from exc
        for entry in found:
            key = (entry.suite, entry.model, json.dumps(entry.conditions, sort_keys=True))
            groups.setdefault(key, []).append(entry)
    suites: dict[str, list[Row]] = {}
    for (suite, model, _), grouped in groups.items():
        suites.setdefault(suite, []).append(Row(model, suite, grouped[0].conditions, grouped))
    return Board(runs, {suite: _ranked(rows) for suite, rows in sorted(suites.items())})


def write_board(found: Board, path: Path | str) -> Path:
    """The board as a self-contained page at `path`, with its figures beside it as JSON."""
    path = Path(path)
    if path.suffix == ".json":
        raise ConfigError(f"{path}: the board is a page (board.html); its JSON goes beside it")
    charts = {
        suite: size_vs_score(suite, [(r.label, r.parameters, r.pass_at_1) for r in rows])
        for suite, rows in found.suites.items()
    }
    page = render(
        "board.html.j2",
        board=found,
        charts=charts,
        shown_size=shown_size,
        integrity_headers=Integrity.HEADERS,
    )
    write_atomic(path, page)
    write_atomic(path.with_suffix(".json"), json.dumps(found.as_dict(), indent=2))
    return path
