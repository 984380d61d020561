"""`codetrial sweep`: a grid expanded into cells, each an ordinary run directory; a
sweep run again skips what finished and resumes what did not; a failed cell is kept
apart; `--dry-run` estimates from earlier runs. And `codetrial board` over them."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import codetrial
from codetrial.errors import ConfigError
from codetrial.sweep.spec import expand, load_sweep, resources
from codetrial.tasks import Task
from tests.conftest import CLI_ENV, CODETRIAL, fenced

TASKS = ["two_sum", "palindrome", "merge_intervals", "top_k_frequent"]


def _script(folder: Path, name: str, contracts10: dict[str, Task], wrong: set[str]) -> str:
    """A scripted model answering every task: the reference, or a wrong function for
    the tasks in `wrong`."""
    script = {
        f"def {t.entry_point}(": [
            fenced(
                f"def {t.entry_point}(*args):\n    return None\n"
                if t.id in wrong
                else t.reference or ""
            )
        ]
        for t in contracts10.values()
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(script))
    return f"scripted/{path}"


def _sweep_file(
    folder: Path, models: list[str], seeds: list[int], extra: str = "", run: str = "workers = 2"
) -> Path:
    """A sweep of `models` × `seeds` over four contracts10 tasks; `run`: the [run]
    table's own lines, `extra`: [suites.contracts10]'s."""
    path = folder / "nightly.toml"
    path.write_text(
        f'[grid]\nmodel = {json.dumps(models)}\nsuite = ["contracts10"]\nseed = {seeds}\n\n'
        f"[run]\nefficiency = false\n{run}\n\n"
        f"[suites.contracts10]\ntask_ids = {json.dumps(TASKS)}\n{extra}"
    )
    return path


def _cli(
    *args: object, timeout: float = 300, env: dict[str, str] = CLI_ENV
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CODETRIAL, *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout
    )


def _outcomes(folder: Path) -> dict[str, list[tuple[str, int, int, str]]]:
    """Every cell's stored attempts as (task, sample, attempt, outcome)."""
    found = {}
    for run_dir in sorted((folder / "cells").iterdir()):
        attempts = codetrial.open_run(run_dir).attempts()
        found[run_dir.name] = [(a.task_id, a.sample, a.attempt, a.outcome.value) for a in attempts]
    return found


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"], "temprature": [1]}},
         "grid: unknown key 'temprature'; did you mean 'temperature'?"),
        ({"grid": {"model": ["embeded"], "suite": ["contracts10"]}},
         "grid.model: unknown model backend 'embeded'; did you mean 'embedded'?"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"], "seed": ["one"]}},
         "grid.seed: 'one' is not int"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"]}, "run": {"gate": "std"}},
         "run.gate: unknown gate profile 'std'; did you mean 'stdlib'? (known: builtins-only"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"],
                   "edit_format": ["whole", "difff"]}},
         "grid.edit_format: unknown edit format 'difff'; did you mean 'diff'?"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"]},
          "run": {"temperature": -1}}, "temperature: Input should be greater than or equal to 0"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"]}, "run": {"timeout": 0}},
         "timeout must be above 0 seconds"),
        ({"grid": {"model": ["embedded"]}}, "[grid] needs `suite`"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"]}, "run": {"seed": 1},
          "suites": {"humaneval": {"limit": 4}}}, "[suites.humaneval] is for a suite the grid"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"]}, "run": {"model": "x"}},
         "run: unknown key 'model'"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"], "seed": [1]},
          "run": {"seed": 2}}, "seed is both in [grid] and in [run]"),
        ({"grids": {}},
         "unknown key 'grids'; did you mean 'grid'? (known: grid, run, suites, ray)"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"], "task_ids": ["two_sum"]}},
         "grid.task_ids: put it in [run] or [suites.NAME]; it is no axis"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"]},
          "run": {"unsafe_host_exec": True}}, "run: unknown key 'unsafe_host_exec'"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"], "limit": [2, 4]},
          "suites": {"contracts10": {"limit": 3}}},
         "limit is both in [grid] and in [suites.contracts10]"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"], "seed": [1, 2, 9]},
          "run": {"samples": 3}},
         "seeds 1 and 2 with samples = 3 draw the same samples (sample i is drawn with seed + i)"
         ": space the seeds at least 3 apart, e.g. seed = [1, 4, 7]"),
        ({"grid": {"model": ["embedded"], "suite": ["contracts10"]}, "ray": {"cpu": 1}},
         "ray: unknown key 'cpu'; did you mean 'cpus'?"),
    ],
)  # fmt: skip
def test_a_bad_sweep_file_names_the_key_and_what_it_allows(
    document: dict[str, object], said: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        expand(document, "nightly.toml")
        resources(document, "nightly.toml")
    assert said in str(caught.value)


def test_the_grid_expands_into_one_cell_per_combination_and_no_more() -> None:
    cells = expand(
        {
            "grid": {
                "model": ["embedded", "ollama/qwen3:8b"],
                "suite": ["contracts10"],
                "seed": [1, 2, 3],
                "temperature": 0.8,
                "edit_format": ["whole", "diff"],
            },
            "run": {"workers": 2},
            "suites": {"contracts10": {"limit": 3}},
        },
        "nightly.toml",
    )
    # contracts10's tasks are functions: the edit formats fold into one cell each
    assert len(cells) == 2 * 3
    assert len({c.id for c in cells}) == 6
    first = cells[0]
    assert first.options == {
        "workers": 2,
        "limit": 3,
        "seed": 1,
        "temperature": 0.8,
        "suite": "contracts10",
        "models": ["embedded"],
    }
    assert first.label == "embedded · contracts10 · seed 1"
    assert first.chains == 3
    assert first.id.startswith("embedded-contracts10-seed1-")


def test_a_release_window_is_a_condition_of_a_sweep(tmp_path: Path) -> None:
    """TOML's own dates are taken as the window's, one cell a window."""
    sweep = tmp_path / "windows.toml"
    data = Path(__file__).parent / "fixtures" / "contests" / "livecodebench.jsonl"
    sweep.write_text(
        '[grid]\nmodel = ["embedded"]\nsuite = ["livecodebench"]\n'
        "since = [2023-01-01, 2024-01-01]\n"
        f'[run]\ndata = "{data}"\nuntil = 2024-12-31\n'
    )
    cells = load_sweep(sweep).cells
    assert [(c.options["since"], c.options["until"], c.chains) for c in cells] == [
        ("2023-01-01", "2024-12-31", 2),
        ("2024-01-01", "2024-12-31", 1),
    ]


def test_the_example_sweep_file_is_the_nightly_grid_the_sweeps_page_shows() -> None:
    example = Path(__file__).parents[1] / "examples" / "nightly.toml"
    cells = load_sweep(example).cells
    assert [(c.suite, c.options["seed"], c.chains) for c in cells] == [
        ("contracts10", 1, 10), ("contracts10", 2, 10), ("contracts10", 3, 10),
        ("humaneval", 1, 40), ("humaneval", 2, 40), ("humaneval", 3, 40),
    ]  # fmt: skip
    page = (Path(__file__).parents[1] / "docs" / "sweeps.md").read_text()
    assert example.read_text().split("\n[grid]", 1)[1] in page


def test_a_sweep_runs_every_cell_as_a_run_then_skips_them_and_shows_the_board(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    strong = _script(tmp_path, "strong", contracts10, set())
    weak = _script(tmp_path, "weak", contracts10, {"two_sum", "palindrome"})
    sweep = _sweep_file(tmp_path, [strong, weak], [1, 2])
    out = tmp_path / "out"

    dry = _cli("sweep", sweep, "--out", out, "--dry-run", "--runs-dir", tmp_path / "none")
    assert dry.returncode == 0, dry.stderr
    assert "4 cells, 4 to run; no estimate" in dry.stdout
    assert not out.exists()

    first = _cli("sweep", sweep, "--out", out)
    assert first.returncode == 0, first.stderr
    assert "cell 4/4" in first.stdout
    state = json.loads((out / "sweep.json").read_text())
    assert len(state["finished"]) == 4 and not state["failed"]
    for run_dir in (out / "cells").iterdir():  # every cell is an ordinary run
        assert (run_dir / "report.html").is_file()
        shown = _cli("report", run_dir)
        assert shown.returncode == 0, shown.stderr
    board = json.loads((out / "board.json").read_text())
    rows = board["suites"]["contracts10"]
    assert [r["model"] for r in rows] == [strong, weak]
    assert rows[0]["pass@1"]["value"] == 1.0 and rows[1]["pass@1"]["value"] == 0.5
    assert rows[1]["seeds"] == [1, 2] and rows[1]["over_seeds"] == {"mean": 0.5, "sd": 0.0}
    assert rows[1]["paired_with_above"]["above_better"] == 2
    assert (out / "board.html").is_file()
    assert "pass@1" in first.stdout and "board:" in first.stdout

    again = _cli("sweep", sweep, "--out", out)
    assert again.returncode == 0, again.stderr
    assert "cell 1/" not in again.stdout
    assert json.loads((out / "sweep.json").read_text())["finished"] == state["finished"]

    estimated = _cli("sweep", sweep, "--out", out, "--dry-run", "--json")
    planned = json.loads(estimated.stdout)
    assert {c["status"] for c in planned["cells"]} == {"finished"}


def test_a_sweep_killed_mid_cell_resumes_to_the_same_results(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    weak = _script(tmp_path, "weak", contracts10, {"two_sum"})
    sweep = _sweep_file(tmp_path, [weak], [1, 4, 7], "samples = 3\n")
    whole = _cli("sweep", sweep, "--out", tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr

    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [CODETRIAL, "sweep", str(sweep), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        cells = sorted((out / "cells").glob("*/trial.sqlite")) if out.exists() else []
        if len(cells) == 2:  # the second cell has started
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    planned = json.loads(_cli("sweep", sweep, "--out", out, "--dry-run", "--json").stdout)
    statuses = [c["status"] for c in planned["cells"]]
    assert statuses[0] == "finished" and statuses[2] == "new"
    assert planned["cells"][2]["estimate_s"] > 0  # from the finished cell's seconds

    resumed = _cli("sweep", sweep, "--out", out)
    assert resumed.returncode == 0, resumed.stderr
    assert "cell 1/1" not in resumed.stdout and "cell 1/" in resumed.stdout
    assert _outcomes(out) == _outcomes(tmp_path / "whole")


def test_a_cell_whose_server_is_down_fails_alone_and_is_retried(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    strong = _script(tmp_path, "strong", contracts10, set())
    sweep = _sweep_file(
        tmp_path, [strong, "ollama/qwen3:8b"], [1], f'ollama_url = "http://127.0.0.1:{port}"\n'
    )
    out = tmp_path / "out"
    result = _cli("sweep", sweep, "--out", out)
    assert result.returncode == 1
    assert "ollama" in result.stderr and "failed" in result.stderr
    assert "run the sweep again" in result.stderr
    state = json.loads((out / "sweep.json").read_text())
    assert len(state["finished"]) == 1 and len(state["failed"]) == 1
    assert "not reachable" in next(iter(state["failed"].values()))
    assert json.loads((out / "board.json").read_text())["suites"]["contracts10"]

    again = _cli("sweep", sweep, "--out", out)
    assert again.returncode == 1
    assert "cell 1/1" in again.stdout  # only the failed cell runs again


def test_the_board_never_pools_runs_whose_conditions_differ(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    strong = _script(tmp_path, "strong", contracts10, set())
    runs = tmp_path / "runs"
    for extra in ([], ["--gate", "stdlib"], ["--seed", "7"]):
        made = _cli(
            "run",
            "--model",
            strong,
            "--runs-dir",
            runs,
            "--no-efficiency",
            *[a for t in TASKS for a in ("--task", t)],
            *extra,
        )
        assert made.returncode == 0, made.stderr
    shown = _cli("board", runs, "--size", f"{strong}=1.5B", "--out", tmp_path / "b.html", "--json")
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)["suites"]["contracts10"]
    assert sorted(len(r["runs"]) for r in rows) == [1, 2]  # the seeds pooled, the gate not
    # the gate's profile changes the system prompt too, and the label says both
    assert sorted(r["differs"]["gate"] for r in rows) == ["builtins-only", "stdlib"]
    assert all(r["label"].startswith(f"{strong} (prompt ") for r in rows)
    assert {r["parameters"] for r in rows} == {1.5e9}
    page = (tmp_path / "b.html").read_text()
    assert "<svg" in page and "parameters (log scale)" in page

    bad = _cli("board", tmp_path / "nothing-here")
    assert bad.returncode == 2 and "no such folder" in bad.stderr
    (tmp_path / "empty").mkdir()
    empty = _cli("board", tmp_path / "empty")
    assert empty.returncode == 2 and "no run directory found" in empty.stderr
    clash = _cli("board", runs, "--out", tmp_path / "b.json")
    assert clash.returncode == 2 and "its JSON goes beside it" in clash.stderr
    odd = _cli("board", runs, "--size", "1.5B")
    assert odd.returncode == 2 and "MODEL=SIZE" in odd.stderr
