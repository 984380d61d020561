"""Program tasks: contest problems, whose candidate is a whole program that reads a
case's input on standard input and prints its answer (trust level "trusted-side":
what it printed is compared in codetrial's process).

A program suite is a folder of problem folders, each holding:

    statement.md       the problem as the model reads it: input and output formats,
                       constraints, samples
    samples/NAME.in    sample cases, shown in the statement and used for repair
    samples/NAME.out   feedback (each input with its expected output)
    hidden/NAME.in     hidden cases, never shown
    hidden/NAME.out
    problem.toml       optional: how output is compared and the limits of a case
    reference.py       optional: a program that solves it
    checker.py         optional: a program that decides each case instead of the
                       comparison (see `codetrial.kinds.program`)

problem.toml's fields, all optional:

    compare = "tokens"    "exact" | "tokens" | "float" (see `codetrial.verdict.outputs`)
    abs_tol = 1e-6        for "float": how far a number may be from the expected one,
    rel_tol = 1e-6        absolutely or relative to it
    cpu_s = 2             CPU seconds of one case's run (unstated: calibrated from the
                          reference, see `codetrial.verdict.calibration`, else DEFAULT_CPU_S)
    wall_s = 6.0          wall seconds of one case's run (unstated: WALL_PER_CPU times
                          its CPU seconds, at least DEFAULT_WALL_S)
    interactive = false   an interactive problem is refused: none is judged here
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from codetrial.errors import TaskFormatError
from codetrial.tasks.files import read_task_file

STATEMENT = "statement.md"
PROBLEM = "problem.toml"
SAMPLES, HIDDEN = "samples", "hidden"
REFERENCE, CHECKER = "reference.py", "checker.py"
COMPARISONS = ("exact", "tokens", "float")
_FIELDS = {"compare", "abs_tol", "rel_tol", "cpu_s", "wall_s", "interactive"}
DEFAULT_CPU_S = 2.0  # CPU seconds of a case when neither the problem nor a reference says
DEFAULT_WALL_S = 6.0
WALL_PER_CPU = 3.0  # wall seconds per CPU second of a case whose problem states no wall limit


@dataclass(frozen=True)
class Case:
    """One test case: what the program reads and the output expected of it (with a
    checker, one right output of several)."""

    name: str
    input: str
    output: str


def case_name(sample: bool, case: Case) -> str:
    """How a case is named in a verdict and in a run's time limits: "sample 1", "hidden 1"."""
    return f"{'sample' if sample else 'hidden'} {case.name}"


@dataclass(frozen=True)
class Timing:
    """The CPU seconds each case of a task may take in a run (`cpu_s`: one limit for
    every case, or case name -> seconds) and how they were set: "calibrated" from the
    reference's CPU seconds on each case measured on this machine (`reference_s`),
    "stated" by the problem, or the "default" (`why` says why a task with a reference
    was not calibrated)."""

    how: str
    cpu_s: float | tuple[tuple[str, float], ...]
    reference_s: tuple[tuple[str, float], ...] = ()
    why: str = ""

    def of(self, name: str) -> float:
        return self.cpu_s if isinstance(self.cpu_s, float) else dict(self.cpu_s)[name]

    def as_dict(self) -> dict[str, Any]:
        """The manifest's entry (see `of_dict`)."""
        cpu_s = self.cpu_s if isinstance(self.cpu_s, float) else dict(self.cpu_s)
        kept: dict[str, Any] = {"how": self.how, "cpu_s": cpu_s}
        if self.reference_s:
            kept["reference_s"] = dict(self.reference_s)
        return kept | ({"why": self.why} if self.why else {})

    @classmethod
    def of_dict(cls, entry: Mapping[str, Any]) -> Timing:
        cpu_s = entry["cpu_s"]
        return cls(
            entry["how"],
            float(cpu_s) if isinstance(cpu_s, int | float) else tuple(cpu_s.items()),
            tuple(entry.get("reference_s", {}).items()),
            entry.get("why", ""),
        )


@dataclass(frozen=True)
class ProgramTask:
    """A contest problem: its `statement`, its `samples` (shown) and `hidden` cases,
    how a case's output is judged (`compare` with its tolerances, or the `checker`
    program), the CPU and wall seconds of one case's run when the problem states them,
    the ISO date the problem was `released` when its source says (what a contamination
    window selects by), and the `timing` a run judges it by (set on the machine that
    judges, kept in the run's manifest: a condition of the run, not part of the task's
    digest)."""

    id: str
    suite: str
    title: str
    statement: str
    samples: tuple[Case, ...]
    hidden: tuple[Case, ...]
    reference: str | None = None
    checker: str | None = None
    compare: str = "tokens"
    abs_tol: float = 1e-6
    rel_tol: float = 1e-6
    cpu_s: int | None = None
    wall_s: float | None = None
    released: str | None = None
    timing: Timing | None = None
    trust: ClassVar[str] = "trusted-side"
    policy: ClassVar[str] = "contest"
    kind: ClassVar[str] = "program"

    @property
    def digest(self) -> str:
        """Changes whenever the statement, a case, the checker, the comparison or a
        limit does."""
        judged = asdict(self)
        for field in ("id", "suite", "title", "reference", "released", "timing"):
            del judged[field]
        return hashlib.sha256(json.dumps(judged, sort_keys=True).encode()).hexdigest()

    @property
    def timed_digest(self) -> str:
        """The digest with the timing: what a verdict on the task depends on."""
        timed = [self.digest, self.timing.as_dict() if self.timing else None]
        return hashlib.sha256(json.dumps(timed, sort_keys=True).encode()).hexdigest()

    @property
    def named_cases(self) -> tuple[tuple[str, Case], ...]:
        """Every case by its name (see `case_name`), the samples first."""
        return tuple(
            (case_name(sample, case), case)
            for sample, cases in ((True, self.samples), (False, self.hidden))
            for case in cases
        )

    def seconds(self, name: str) -> tuple[float, float]:
        """The CPU and wall seconds of the run of the case `name`: the run's timing,
        else the problem's stated limit, else the defaults."""
        cpu = self.timing.of(name) if self.timing else float(self.cpu_s or DEFAULT_CPU_S)
        return cpu, self.wall_s or max(DEFAULT_WALL_S, WALL_PER_CPU * cpu)


def is_program_suite(folder: Path) -> bool:
    return any((p / STATEMENT).is_file() for p in folder.iterdir() if p.is_dir())


def load_programs(folder: Path, suite: str) -> list[ProgramTask]:
    """The problems of a program suite; a TaskFormatError names the file and what is
    wrong with it."""
    tasks = [
        load_problem(p, suite)
        for p in sorted(folder.iterdir())
        if p.is_dir() and p.name[0] not in "._"
    ]
    if not tasks:
        raise TaskFormatError(f"{folder}: no problem folders in this suite")
    return tasks


def load_problem(folder: Path, suite: str) -> ProgramTask:
    """One problem folder (see the module's docstring)."""
    statement_path = folder / STATEMENT
    if not statement_path.is_file():
        raise TaskFormatError(f"{folder}: no {STATEMENT} (a problem folder needs one)")
    statement = read_task_file(statement_path)
    settings = _settings(folder / PROBLEM)
    samples, hidden = _cases(folder / SAMPLES), _cases(folder / HIDDEN)
    if not samples:
        raise TaskFormatError(f"{folder / SAMPLES}: no sample case (NAME.in with NAME.out)")
    title = next((line[2:].strip() for line in statement.splitlines() if line[:2] == "# "), "")
    optional = {
        name: read_task_file(folder / name) if (folder / name).is_file() else None
        for name in (REFERENCE, CHECKER)
    }
    return ProgramTask(
        id=folder.name,
        suite=suite,
        title=title or folder.name,
        statement=statement,
        samples=samples,
        hidden=hidden,
        reference=optional[REFERENCE],
        checker=optional[CHECKER],
        **settings,
    )


def _settings(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        settings = tomllib.loads(read_task_file(path))
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"{path}: {exc}") from exc
    unknown = sorted(set(settings) - _FIELDS)
    if unknown:
        raise TaskFormatError(f"{path}: unknown field {unknown[0]!r}; known: {sorted(_FIELDS)}")
    if settings.pop("interactive", False):
        raise TaskFormatError(
            f"{path}: an interactive problem (one that answers the program as it runs) "
            "cannot be judged here: only problems whose whole input is given at the start are"
        )
    if settings.get("compare", "tokens") not in COMPARISONS:
        raise TaskFormatError(f"{path}: field 'compare' must be one of {', '.join(COMPARISONS)}")
    for name, low in (("abs_tol", 0), ("rel_tol", 0), ("cpu_s", 1), ("wall_s", 1)):
        value = settings.get(name, low)
        kinds = int if name == "cpu_s" else int | float
        if isinstance(value, bool) or not isinstance(value, kinds) or value < low:
            raise TaskFormatError(f"{path}: field {name!r} must be a number, {low} or more")
    return settings


def _cases(folder: Path) -> tuple[Case, ...]:
    if not folder.is_dir():
        return ()
    cases = []
    for path in sorted(folder.glob("*.in"), key=lambda p: (len(p.stem), p.stem)):
        expected = path.with_suffix(".out")
        if not expected.is_file():
            raise TaskFormatError(f"{path}: no {expected.name} beside it")
        cases.append(Case(path.stem, read_task_file(path), read_task_file(expected)))
    strays = sorted(p.name for p in folder.glob("*.out") if not p.with_suffix(".in").is_file())
    if strays:
        raise TaskFormatError(f"{folder / strays[0]}: no input beside it")
    return tuple(cases)
