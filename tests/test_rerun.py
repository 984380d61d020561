"""`codetrial rerun`: a stored run re-judged from its store alone, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cli, fenced, write_task

BURNS_CPU = (
    "import time\n\n"
    "def double(x):\n"
    "    end = time.process_time() + 1.5\n"
    "    while time.process_time() < end:\n"
    "        pass\n"
    "    return 2 * x\n"
)


def _scripted_run(tmp_path: Path) -> Path:
    """double: a slow right answer; halve: a wrong one, then a right repair."""
    suite = tmp_path / "suite"
    for name, check in (("double", "double(2) == 4"), ("halve", "halve(4) == 2")):
        write_task(
            suite / name,
            f"def {name}(x: int) -> int:",
            f"from candidate import {name}\n\n\ndef test_{name}():\n    assert {check}\n",
        )
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "double": [fenced(BURNS_CPU)],
                "halve": [
                    fenced("def halve(x):\n    return x // 3\n"),
                    fenced("def halve(x):\n    return x // 2\n"),
                ],
            }
        )
    )
    runs = tmp_path / "runs"
    result = cli(
        "run",
        "--model",
        f"scripted/{script}",
        "--suite",
        suite,
        "--gate",
        "off",
        "--runs-dir",
        runs,
    )
    assert result.returncode == 0, result.stderr
    (run_dir,) = runs.iterdir()
    return run_dir


def test_a_run_re_judged_under_its_own_conditions_is_identical(tmp_path: Path) -> None:
    run_dir = _scripted_run(tmp_path)
    before = sorted(p.name for p in run_dir.rglob("*"))
    result = cli("rerun", run_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "under the run's recorded conditions (bwrap+seccomp+" in result.stdout
    rows = {tuple(line.split("│")[1:3]): line for line in result.stdout.splitlines() if "│" in line}
    first = next(line for key, line in rows.items() if key[1].strip() == "first")
    repair = next(line for key, line in rows.items() if key[1].strip() == "repair")
    assert "2 (100.0 %)" in first and "1 (100.0 %)" in repair
    assert sorted(p.name for p in run_dir.rglob("*")) == before


def test_a_tighter_cpu_limit_flips_what_it_should_and_says_conditions_differ(
    tmp_path: Path,
) -> None:
    run_dir = _scripted_run(tmp_path)
    result = cli("rerun", run_dir, "--cpu-time", "1")
    assert result.returncode == 1
    assert "conditions differ from the run's:" in result.stdout
    assert "limits.cpu_s: 10 -> 1" in result.stdout
    flips = [line for line in result.stdout.splitlines() if "->" in line and "·" in line]
    assert len(flips) == 1, result.stdout
    assert "double · sample 0 · attempt 0: passed -> timeout" in flips[0]
    assert "over 1 s of CPU" in flips[0]
