"""Program tasks' time limits calibrated from their references: measured in the real
sandbox, kept per machine, recorded in a run and judged by again when it is re-judged."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fenced

import codetrial
from codetrial.config import Limits
from codetrial.gate import get_profile
from codetrial.kinds import Asked
from codetrial.kinds.program import OUTPUT_CAP, PROGRAM
from codetrial.models.scripted import ScriptedBackend
from codetrial.records import Outcome, Verdict
from codetrial.rerun import rejudge
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import ProgramTask
from codetrial.tasks.programs import load_problem
from codetrial.verdict.calibration import calibrated
from codetrial.verdict.pool import JudgePool

ASKED = Asked.of(get_profile("contest"), "whole", None)
N = 1_000_000
REFERENCE = "n = int(input())\nprint(sum(i * i % 7 for i in range(n)))\n"


def repeated(times: int) -> str:
    """The reference, doing its work `times` times over."""
    loop = f"for _ in range({times}):\n    total = sum(i * i % 7 for i in range(n))\n"
    return f"n = int(input())\n{loop}print(total)\n"


SLOW, MODEST = repeated(12), repeated(2)
FLOOR = 0.1  # below four times the reference's time on the hidden case, on any machine


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The machine's cache of measurements, empty at first."""
    monkeypatch.setenv("CODETRIAL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "calibration"


@pytest.fixture(scope="module")
def pool() -> Iterator[JudgePool]:
    judges = JudgePool(1, SandboxPolicy(Limits()))
    yield judges
    judges.close()


def write_problem(folder: Path, settings: str = "") -> Path:
    for part, given in (("samples", 10), ("hidden", N)):
        (folder / part).mkdir(parents=True, exist_ok=True)
        (folder / part / "1.in").write_text(f"{given}\n")
        (folder / part / "1.out").write_text(f"{sum(i * i % 7 for i in range(given))}\n")
    (folder / "statement.md").write_text("# Squares\n\nPrint the sum of i*i mod 7, i < n.\n")
    (folder / "reference.py").write_text(REFERENCE)
    (folder / "problem.toml").write_text(settings)
    return folder


def judged(pool: JudgePool, task: ProgramTask, code: str) -> Verdict:
    return PROGRAM.check(pool, task, fenced(code), ASKED).result()


def test_a_calibrated_limit_catches_a_slow_program_the_default_lets_pass(
    pool: JudgePool, tmp_path: Path, cache: Path
) -> None:
    task = load_problem(write_problem(tmp_path / "squares"), "user")
    (timed,) = calibrated(pool, [task], factor=4.0, floor=FLOOR, output_cap=OUTPUT_CAP)
    timing = timed.timing
    assert timing is not None and timing.how == "calibrated"
    reference = dict(timing.reference_s)
    assert set(reference) == {"sample 1", "hidden 1"} == set(dict(timing.cpu_s))
    assert 0 < reference["sample 1"] < reference["hidden 1"] < 0.2
    for name, seconds in reference.items():
        assert timing.of(name) == pytest.approx(max(FLOOR, 4 * seconds), abs=0.01)
    assert len(list(cache.iterdir())) == 1  # measured once, kept for this machine
    assert judged(pool, timed, REFERENCE).outcome is Outcome.PASSED
    caught = judged(pool, timed, SLOW)
    assert caught.outcome is Outcome.TIMEOUT, caught.detail
    assert caught.detail == "a hidden case failed (timeout)"
    assert "over the case's" in caught.hidden_output
    assert judged(pool, task, SLOW).outcome is Outcome.PASSED  # under the default 2 s


def test_a_calibrated_limit_lets_pass_a_program_the_floor_alone_would_stop(
    pool: JudgePool, tmp_path: Path
) -> None:
    task = load_problem(write_problem(tmp_path / "squares"), "user")
    (timed,) = calibrated(pool, [task], factor=4.0, floor=FLOOR, output_cap=OUTPUT_CAP)
    assert timed.timing is not None
    floor = dict(timed.timing.reference_s)["hidden 1"]  # what the reference itself takes
    (floored,) = calibrated(pool, [task], factor=0.01, floor=floor, output_cap=OUTPUT_CAP)
    assert floored.timing is not None
    assert floored.timing.of("hidden 1") == pytest.approx(floor, abs=0.01)
    assert judged(pool, timed, MODEST).outcome is Outcome.PASSED
    assert judged(pool, floored, MODEST).outcome is Outcome.TIMEOUT


def test_a_problem_that_states_its_limit_is_judged_by_it(pool: JudgePool, tmp_path: Path) -> None:
    task = load_problem(write_problem(tmp_path / "squares", "cpu_s = 3\n"), "user")
    (timed,) = calibrated(pool, [task], factor=4.0, floor=FLOOR, output_cap=OUTPUT_CAP)
    assert timed.timing is not None and timed.timing.how == "stated"
    assert timed.timing.as_dict() == {"how": "stated", "cpu_s": 3.0}
    assert timed.seconds("hidden 1") == (3.0, 9.0)
    assert judged(pool, timed, SLOW).outcome is Outcome.PASSED


def test_a_second_calibration_on_this_machine_reads_the_first(
    pool: JudgePool, tmp_path: Path, cache: Path
) -> None:
    task = load_problem(write_problem(tmp_path / "squares"), "user")
    calibrated(pool, [task], factor=4.0, floor=FLOOR, output_cap=OUTPUT_CAP)
    (kept,) = cache.iterdir()
    entry = json.loads(kept.read_text())
    entry["reference_s"] = {name: 0.5 for name in entry["reference_s"]}
    kept.write_text(json.dumps(entry))
    (again,) = calibrated(pool, [task], factor=3.0, floor=FLOOR, output_cap=OUTPUT_CAP)
    assert again.timing is not None and dict(again.timing.cpu_s)["hidden 1"] == 1.5
    changed = dataclasses.replace(task, reference=REFERENCE + "# another reference\n")
    (other,) = calibrated(pool, [changed], factor=3.0, floor=FLOOR, output_cap=OUTPUT_CAP)
    assert other.timing is not None and dict(other.timing.cpu_s)["hidden 1"] < 1.5
    assert len(list(cache.iterdir())) == 2


def test_a_run_records_its_limits_and_rerun_judges_by_them_without_measuring(
    tmp_path: Path, cache: Path
) -> None:
    write_problem(tmp_path / "suite" / "squares")
    backend = ScriptedBackend({"Squares": [fenced(SLOW)]}, "scripted/slow")
    run = codetrial.run(
        str(tmp_path / "suite"),
        ["scripted/slow"],
        runs_dir=tmp_path / "runs",
        name="slow",
        backends={"scripted/slow": backend},
        time_floor=FLOOR,
    )
    (row,) = run.table()
    assert row["outcome"] == "timeout"
    manifest = json.loads((run.path / "manifest.json").read_text())
    assert (manifest["config"]["time_factor"], manifest["config"]["time_floor"]) == (4.0, FLOOR)
    limits = manifest["time_limits"]["squares"]
    assert limits["how"] == "calibrated" and set(limits["cpu_s"]) == {"sample 1", "hidden 1"}
    assert limits["cpu_s"]["hidden 1"] < 1.0
    (kept,) = cache.iterdir()  # a measurement now would let the slow program pass
    entry = json.loads(kept.read_text())
    kept.write_text(json.dumps(entry | {"reference_s": {k: 5.0 for k in entry["reference_s"]}}))
    again = rejudge(run.path, workers=1)
    assert again.identical, again.differences
    assert json.loads(kept.read_text())["reference_s"]["hidden 1"] == 5.0


def test_a_reference_that_does_not_finish_keeps_the_default_and_says_why(
    pool: JudgePool, tmp_path: Path, cache: Path
) -> None:
    task = load_problem(write_problem(tmp_path / "squares"), "user")
    broken = dataclasses.replace(task, reference="raise SystemExit(3)\n")
    without = dataclasses.replace(task, id="without", reference=None)
    timed, bare = calibrated(pool, [broken, without], output_cap=OUTPUT_CAP)
    assert timed.timing is not None and bare.timing is not None
    assert timed.timing.as_dict() == {
        "how": "default",
        "cpu_s": 2.0,
        "why": "the reference did not finish case sample 1 (it did not exit 0)",
    }
    assert bare.timing.as_dict() == {"how": "default", "cpu_s": 2.0}
    assert not cache.exists()
