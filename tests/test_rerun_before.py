"""Runs stored by an earlier codetrial (tests/fixtures/before/, see its README), one of
each kind of task, re-judged by this one: every verdict `codetrial rerun` re-judges
comes out identical, every stored attempt is counted, and each run still opens,
reports and reads back the outcomes it stored.

Each kind's folder is the folder its runs were made in, and the paths they record
(`--data`, `--repos`, `--wheels`) are relative to it: the test copies the folder and
lays out beside `stored/` what those paths name here, then re-judges from the copy."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import codetrial
from codetrial.store.manifest import SCHEMA_VERSION
from tests.conftest import CLI_ENV, DATA_WHEELS, FIXTURES, POLYGLOT, SWE_WHEELS, cli
from tests.fixtures.before.make import RUNS, build_repos

BEFORE = FIXTURES / "before"
SCRIPTED = "scripted/script.json"
Tally = tuple[int, int]  # judged, not re-judged


@dataclass(frozen=True)
class Stored:
    """A stored run: its kind's folder, its directory under the folder's stored/, how
    many of its attempts rerun judges and leaves, by (model, stage), the first
    and the final outcome of each (model, task), and the verdicts judged differently
    now, as rerun lists them (a fix of the judging, shown on purpose)."""

    kind: str
    run: str
    tallies: dict[tuple[str, str], Tally]
    outcomes: dict[tuple[str, str], tuple[str, str]]
    changed: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.kind}-{Path(self.run).name.split('-')[0]}"


def _question_tallies(label: str, repairs: int) -> dict[tuple[str, str], Tally]:
    """A question's rounds are re-judged: each program runs again and the stored reply
    is checked again against what it left."""
    found = {(f"{SCRIPTED} ({label})", "first"): (2, 0)}
    return found | ({(f"{SCRIPTED} ({label})", "repair"): (repairs, 0)} if repairs else {})


STORED = [
    Stored("function", "function",
           {(SCRIPTED, "first"): (3, 0), (SCRIPTED, "repair"): (3, 0)},
           {(SCRIPTED, "two_sum"): ("passed", "passed"),
            (SCRIPTED, "palindrome"): ("failed", "passed"),
            (SCRIPTED, "merge_intervals"): ("rejected", "failed")}),
    # proverb's first try fails two unittest assertions, stored as "error": the
    # runner then named a failure's exception from the last line of its trace, which
    # was a line of the assertion's diff
    Stored("workspace", "workspace",
           {(SCRIPTED, "first"): (2, 0), (SCRIPTED, "repair"): (2, 0)},
           {(SCRIPTED, "proverb"): ("error", "passed"),
            (SCRIPTED, "phone-number"): ("passed", "passed")},
           (f"{SCRIPTED} · proverb · sample 0 · attempt 0: error -> failed",)),
    Stored("repository", "evaluate",
           {("empty", "first"): (1, 0), ("gold", "first"): (2, 0), ("wrong", "first"): (2, 0)},
           {("empty", "acme__calc-1"): ("no_code", "no_code"),
            ("gold", "acme__calc-1"): ("passed", "passed"),
            ("gold", "acme__calc-2"): ("passed", "passed"),
            ("wrong", "acme__calc-1"): ("failed", "failed"),
            ("wrong", "acme__calc-2"): ("malformed_edit", "malformed_edit")}),
    Stored("repository", "run",
           {(SCRIPTED, "first"): (2, 0), (SCRIPTED, "repair"): (1, 0)},
           {(SCRIPTED, "acme__calc-1"): ("failed", "passed"),
            (SCRIPTED, "acme__calc-2"): ("passed", "passed")}),
    Stored("question", "question",
           _question_tallies("direct", 0) | _question_tallies("once", 0)
           | _question_tallies("fix", 1),
           {(f"{SCRIPTED} (direct)", "orders-10-plus"): ("failed", "failed"),
            (f"{SCRIPTED} (direct)", "city-most-units"): ("passed", "passed"),
            (f"{SCRIPTED} (once)", "orders-10-plus"): ("failed", "failed"),
            (f"{SCRIPTED} (once)", "city-most-units"): ("passed", "passed"),
            (f"{SCRIPTED} (fix)", "orders-10-plus"): ("error", "passed"),
            (f"{SCRIPTED} (fix)", "city-most-units"): ("passed", "passed")}),
    Stored("sweep", "cells/scripted_strong.json-contracts10-259529b7",
           {("scripted/strong.json", "first"): (2, 0)},
           {("scripted/strong.json", "two_sum"): ("passed", "passed"),
            ("scripted/strong.json", "palindrome"): ("passed", "passed")}),
    Stored("sweep", "cells/scripted_weak.json-contracts10-ed13b75d",
           {("scripted/weak.json", "first"): (2, 0), ("scripted/weak.json", "repair"): (1, 0)},
           {("scripted/weak.json", "two_sum"): ("failed", "failed"),
            ("scripted/weak.json", "palindrome"): ("passed", "passed")}),
]  # fmt: skip


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the runs' package environments are built, once for the module."""
    return tmp_path_factory.mktemp("cache")


def _laid_out(kind: str, tmp_path: Path) -> Path:
    """A copy of the kind's folder with what its runs' recorded paths name."""
    folder = tmp_path / kind
    shutil.copytree(BEFORE / kind, folder)
    if kind == "workspace":
        (folder / "polyglot-python").symlink_to(POLYGLOT)
    wheels = {"repository": SWE_WHEELS, "question": DATA_WHEELS}.get(kind)
    if wheels is not None:
        assert wheels.is_dir(), f"{wheels} is missing: `make test` downloads it"
        (folder / "wheels").symlink_to(wheels)
    if kind == "repository":
        lines = (folder / "instances" / "instances.jsonl").read_text().splitlines()
        recorded = {r["instance_id"]: r["base_commit"] for r in map(json.loads, lines)}
        assert build_repos(folder / "repos") == recorded, "acme/calc's commits are not the runs'"
    return folder


def _cli(folder: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli(*args, cwd=folder, env={**CLI_ENV, "CODETRIAL_CACHE": str(cache)}, timeout=600)


def _tallies(stdout: str) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """The rerun table's rows: (model, stage) -> judged, identical, different, not
    re-judged."""
    found = {}
    for line in stdout.splitlines():
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if len(cells) == 6 and cells[2].isdigit():
            model, stage, judged, identical, different, left = cells
            found[model, stage] = (
                int(judged),
                int(identical.split()[0]),
                int(different),
                int(left),
            )
    return found


@pytest.mark.parametrize("stored", STORED, ids=lambda stored: stored.name)
def test_a_stored_run_re_judges_identically_and_reopens(
    stored: Stored, tmp_path: Path, cache: Path
) -> None:
    folder = _laid_out(stored.kind, tmp_path)
    run_dir = folder / RUNS / stored.run
    attempts = codetrial.open_run(run_dir).attempts()

    rerun = _cli(folder, cache, "rerun", str(run_dir.relative_to(folder)))
    output = rerun.stdout + rerun.stderr
    assert rerun.returncode == (1 if stored.changed else 0), output
    assert all(change in rerun.stdout for change in stored.changed), output
    for recorded in ("limits.", "gate_profile"):  # the run's own conditions, read back
        assert recorded not in rerun.stdout, output
    tallies = _tallies(rerun.stdout)
    assert {key: (judged, left) for key, (judged, _, _, left) in tallies.items()} == (
        stored.tallies
    ), output
    assert sum(different for _, _, different, _ in tallies.values()) == len(stored.changed)
    assert all(
        identical + different == judged for judged, identical, different, _ in tallies.values()
    ), output
    assert sum(judged + left for judged, _, _, left in tallies.values()) == len(attempts)

    reported = _cli(folder, cache, "report", str(run_dir.relative_to(folder)))
    assert reported.returncode == 0, reported.stdout + reported.stderr
    assert (run_dir / "report.html").is_file()
    document = json.loads((run_dir / "results.json").read_text())
    assert len(document["tasks"]) == len(stored.outcomes)
    table = codetrial.open_run(run_dir).table()
    assert {
        (row["model"], row["task_id"]): (row["outcome"], row["outcome_after_repair"])
        for row in table
    } == stored.outcomes


def test_the_stored_sweep_is_finished_and_makes_a_board(tmp_path: Path, cache: Path) -> None:
    folder = _laid_out("sweep", tmp_path)
    planned = _cli(folder, cache, "sweep", "sweep.toml", "--out", RUNS, "--dry-run", "--json")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert [c["status"] for c in json.loads(planned.stdout)["cells"]] == ["finished"] * 2
    board = _cli(folder, cache, "board", RUNS, "--out", "board.html", "--json")
    assert board.returncode == 0, board.stdout + board.stderr
    rows = json.loads(board.stdout)["suites"]["contracts10"]
    assert [(r["model"], r["pass@1"]["value"]) for r in rows] == [
        ("scripted/strong.json", 1.0),
        ("scripted/weak.json", 0.5),
    ]


def test_a_stored_question_run_resumes_in_this_schema(tmp_path: Path, cache: Path) -> None:
    """A question run stored when a round's mode was folded into the model's name
    ("scripted/script.json (fix)") resumes: the round it lacks is asked again, and the
    run is rewritten in this store schema, each round's mode a field of its own."""
    folder = _laid_out("question", tmp_path)
    run_dir = folder / RUNS / "question"
    with sqlite3.connect(run_dir / "trial.sqlite") as db:
        label = f"{SCRIPTED} (fix)"
        db.execute("DELETE FROM attempts WHERE model = ? AND attempt = 1", (label,))
    resumed = _cli(folder, cache, "run", "--resume", str(run_dir.relative_to(folder)))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    with sqlite3.connect(run_dir / "trial.sqlite") as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        keys = db.execute("SELECT DISTINCT model, mode FROM attempts ORDER BY mode").fetchall()
    assert keys == [(SCRIPTED, mode) for mode in ("direct", "fix", "once")]
    assert json.loads((run_dir / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION
    question = next(s for s in STORED if s.kind == "question")
    table = codetrial.open_run(run_dir).table()
    assert {
        (row["model"], row["task_id"]): (row["outcome"], row["outcome_after_repair"])
        for row in table
    } == question.outcomes
