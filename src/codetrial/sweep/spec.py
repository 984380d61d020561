"""A sweep file read, checked and expanded into cells: one run of one model each.

A sweep file is TOML with up to four tables. `[grid]` names the conditions that vary:
every combination of its values is a cell, and `model` and `suite` must be there.
`[run]` holds the conditions every cell shares. `[suites.NAME]` holds those of one
suite's cells, such as its data file or `limit`. Their keys are `codetrial.run`'s
keyword arguments (the command's options with `_` for `-`); a key in `[grid]` takes a
list or one value, elsewhere one value. `[ray]` declares what each model's actor needs
on a Ray cluster: `cpus` (default: the cells' `workers`) and `memory_mb`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
import tomllib
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from codetrial.api import configure, load_tasks
from codetrial.edits import EDIT_FORMATS
from codetrial.errors import CodetrialError, ConfigError
from codetrial.gate import PROFILES
from codetrial.models.base import KINDS
from codetrial.registry import Registry

TABLES = ("grid", "run", "suites", "ray")
RESOURCES = ("cpus", "memory_mb")
# Set by the grid (suite, model), said one way only (repair_attempts, not tries), a
# secret, which comes from the environment rather than a file others read, or the
# sandbox turned off, which only the command line may ask for.
_NOT_CONDITIONS = {"models", "suite", "api_key", "tries", "unsafe_host_exec", "return"}
_NO_AXIS = {"task_ids"}  # a list is its one value
_CHOICES: dict[str, Registry[Any]] = {"gate": PROFILES, "edit_format": EDIT_FORMATS}


def _options() -> dict[str, Any]:
    """Every condition a sweep may set, with the type `codetrial.run` declares for it."""
    hints = typing.get_type_hints(configure)
    return {name: hint for name, hint in hints.items() if name not in _NOT_CONDITIONS}


OPTIONS = _options()
KEYS = ("model", "suite", *OPTIONS)


@dataclass(frozen=True)
class Cell:
    """One run of the grid: `options` are `codetrial.run`'s keyword arguments, `axes`
    the grid's values that set it apart (for labels), `id` its folder's name, `chains`
    how many samples it draws in all (tasks × samples)."""

    id: str
    options: dict[str, Any]
    axes: dict[str, Any]
    chains: int = 0

    @property
    def model(self) -> str:
        return str(self.options["models"][0])

    @property
    def suite(self) -> str:
        return str(self.options["suite"])

    @property
    def label(self) -> str:
        return " · ".join(
            str(value) if key in ("model", "suite") else f"{key} {value}"
            for key, value in self.axes.items()
        )


@dataclass(frozen=True)
class Sweep:
    """A sweep file's cells, in the order they run: suite by suite, model by model."""

    path: Path
    text: str
    cells: list[Cell]
    resources: dict[str, float]


def load_sweep(path: Path) -> Sweep:
    """The cells of the sweep file at `path`; a ConfigError names the key at fault and
    what it allows."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the sweep file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text: {exc}") from exc
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not TOML: {exc}") from exc
    return Sweep(path, text, expand(document, str(path)), resources(document, str(path)))


def resources(document: Mapping[str, Any], source: str) -> dict[str, float]:
    """The [ray] table: what each model's actor asks of a node."""
    table = _table(document, "ray", source)
    for key, value in table.items():
        if key not in RESOURCES:
            raise _unknown(f"{source}: ray", key, RESOURCES)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{source}: ray.{key} must be a number above 0, not {value!r}")
    return {key: float(value) for key, value in table.items()}


def _unknown(where: str, key: str, known: Sequence[str]) -> ConfigError:
    return ConfigError(f"{where}: " + Registry[None]("key").unknown(key, list(known)))


def _table(document: Mapping[str, Any], name: str, source: str) -> dict[str, Any]:
    value = document.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: {name} must be a table, [{name}], not {value!r}")
    return value


def _checked(key: str, value: Any, where: str) -> Any:
    """One value of `key`, of the type `codetrial.run` takes, and one of its choices."""
    if key in ("model", "suite"):
        if not isinstance(value, str) or not value:
            raise ConfigError(f'{where}.{key}: a name, such as "contracts10", not {value!r}')
        kind = value.partition("/")[0]
        if key == "model" and kind not in KINDS:
            raise ConfigError(f"{where}.model: " + KINDS.unknown(kind))
        return value
    try:
        value = TypeAdapter(OPTIONS[key]).validate_python(value, strict=False)
    except ValidationError as exc:
        wanted = getattr(OPTIONS[key], "__name__", str(OPTIONS[key]))
        raise ConfigError(
            f"{where}.{key}: {value!r} is not {wanted} ({exc.errors()[0]['msg']})"
        ) from None
    if key in _CHOICES and value is not None and value not in _CHOICES[key]:
        raise ConfigError(f"{where}.{key}: " + _CHOICES[key].unknown(value))
    if isinstance(value, Path | date):  # a cell's options are JSON
        return str(value)
    if isinstance(value, tuple | list):
        return list(value)
    return value


def _conditions(table: Mapping[str, Any], where: str, axes: bool) -> dict[str, Any]:
    """A table's keys checked: a grid's values as lists, other tables' as single values."""
    checked: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS or (not axes and key in ("model", "suite")):
            allowed = KEYS if axes else OPTIONS
            raise _unknown(where, key, list(allowed))
        if axes and key in _NO_AXIS:
            raise ConfigError(f"{where}.{key}: put it in [run] or [suites.NAME]; it is no axis")
        if axes:
            values = value if isinstance(value, list) else [value]
            if not values:
                raise ConfigError(f"{where}.{key}: an empty list leaves the grid no cell")
            checked[key] = [_checked(key, v, where) for v in values]
        else:
            checked[key] = _checked(key, value, where)
    return checked


def expand(document: Mapping[str, Any], source: str) -> list[Cell]:
    """The cells of a parsed sweep file, each once."""
    for key in document:
        if key not in TABLES:
            raise _unknown(source, key, TABLES)
    grid = _conditions(_table(document, "grid", source), "grid", axes=True)
    shared = _conditions(_table(document, "run", source), "run", axes=False)
    for needed in ("model", "suite"):
        if needed not in grid:
            raise ConfigError(f"{source}: [grid] needs `{needed}`, a list of one or more names")
    for key in set(grid) & set(shared):
        raise ConfigError(f"{source}: {key} is both in [grid] and in [run]; keep one")
    per_suite = _table(document, "suites", source)
    for name in per_suite:
        if name not in grid["suite"]:
            raise ConfigError(
                f"{source}: [suites.{name}] is for a suite the grid does not name "
                f"(grid.suite: {', '.join(grid['suite'])})"
            )
    varying = [key for key, values in grid.items() if len(values) > 1]
    cells: dict[str, Cell] = {}
    for suite in grid["suite"]:
        own = _conditions(
            _table(per_suite, suite, f"{source}: suites"), f"suites.{suite}", axes=False
        )
        for key in set(grid) & set(own):
            raise ConfigError(f"{source}: {key} is both in [grid] and in [suites.{suite}]")
        _seeds_apart(grid, {**shared, **own}, source)
        edited = _edits_files(suite, {**shared, **own})
        axes = {key: values for key, values in grid.items() if key != "suite"}
        for combination in itertools.product(*axes.values()):
            values = dict(zip(axes, combination, strict=True)) | {"suite": suite}
            if not edited:
                values.pop("edit_format", None)
            cell = _cell(values, shared, own, varying)
            if cell.id not in cells:
                cells[cell.id] = _checked_cell(cell)
    return list(cells.values())


def _checked_cell(cell: Cell) -> Cell:
    """The cell with its number of chains, once `codetrial.run` would accept it."""
    try:
        config, tasks = configure(**cell.options)
    except ConfigError as exc:
        said = re.sub(r"--([a-z-]+)", lambda m: m[1].replace("-", "_"), str(exc))
        raise ConfigError(f"cell {cell.label}: {said}") from exc
    return dataclasses.replace(cell, chains=len(tasks) * config.samples)


def _seeds_apart(grid: Mapping[str, Any], fixed: Mapping[str, Any], source: str) -> None:
    """Sample i of a run is drawn with seed + i, so runs whose seeds are closer than
    their number of samples would draw the same samples, and a board would count
    them twice."""
    seeds = sorted(grid.get("seed", []))
    samples = max(grid.get("samples") or [fixed.get("samples", 1)])
    for low, high in itertools.pairwise(seeds):
        if high - low < samples:
            spaced = [seeds[0] + samples * i for i in range(len(seeds))]
            raise ConfigError(
                f"{source}: seeds {low} and {high} with samples = {samples} draw the same "
                f"samples (sample i is drawn with seed + i): space the seeds at least "
                f"{samples} apart, e.g. seed = {spaced}"
            )


def _edits_files(suite: str, options: Mapping[str, Any]) -> bool:
    """Whether the suite's tasks are answered in an edit format; loading it also
    checks that it exists, with its data file and task ids."""
    try:
        data = options.get("data")
        tasks = load_tasks(
            suite, data=None if data is None else Path(data), task_ids=options.get("task_ids") or ()
        )
    except CodetrialError as exc:
        raise ConfigError(f"suite {suite!r}: {exc}") from exc
    return bool(tasks.kind.edits)


def _cell(
    values: dict[str, Any], shared: Mapping[str, Any], own: Mapping[str, Any], varying: list[str]
) -> Cell:
    options = {**shared, **own, **{k: v for k, v in values.items() if k != "model"}}
    options["models"] = [values["model"]]
    digest = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:8]
    axes = {"model": values["model"], "suite": values["suite"]}
    axes |= {key: values[key] for key in varying if key in values and key not in axes}
    readable = "-".join(
        str(value) if key in ("model", "suite") else f"{key}{value}" for key, value in axes.items()
    )
    return Cell(f"{_slug(readable)}-{digest}", options, axes)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_")[:80]
