"""Sweeps and judging on a real Ray cluster: a head node and a worker node on
loopback, each its own processes (GCS, raylet, workers), started here. A sweep's cells
run on both nodes and come back to the driver's folder with the same results as a
local sweep; a samples file judged in shards gets the same verdicts as a local run;
a node killed mid-sweep, and Ctrl-C, lose nothing that a second run does not redo."""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.ray_cluster import RAY_ENV, LocalCluster
from codetrial.tasks import Task
from tests.conftest import CLI_ENV, CODETRIAL, fenced
from tests.test_sweep import _cli, _outcomes, _sweep_file

ENV = {**CLI_ENV, **RAY_ENV}
SPIN = "\n_spin = sum(range(8_000_000))\n"  # a fifth of a second per import (gate off)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    started = LocalCluster()
    yield started
    started.shutdown()


def _slow_script(folder: Path, contracts10: dict[str, Task]) -> str:
    """The references, two of them wrong, each spinning a little when imported."""
    script = {
        f"def {t.entry_point}(": [
            fenced(
                (
                    f"def {t.entry_point}(*args):\n    return None\n"
                    if t.id == "two_sum"
                    else t.reference or ""
                )
                + SPIN
            )
        ]
        for t in contracts10.values()
    }
    path = folder / "slow.json"
    path.write_text(json.dumps(script))
    return f"scripted/{path}"


def _sweep(folder: Path, models: list[str], seeds: list[int]) -> Path:
    return _sweep_file(folder, models, seeds, run='samples = 2\ngate = "off"')


def _ray_cli(*args: object, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return _cli(*args, timeout=timeout, env=ENV)


def test_a_sweep_on_ray_uses_both_nodes_and_matches_a_local_sweep(
    cluster: LocalCluster, tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    models = [_slow_script(tmp_path, contracts10)]
    strong = tmp_path / "strong.json"
    strong.write_text(
        json.dumps(
            {f"def {t.entry_point}(": [fenced(t.reference or "")] for t in contracts10.values()}
        )
    )
    models.append(f"scripted/{strong}")
    sweep = _sweep(tmp_path, models, [0, 10])
    local = _cli("sweep", sweep, "--out", tmp_path / "local")
    assert local.returncode == 0, local.stderr

    on_ray = _ray_cli("sweep", sweep, "--out", tmp_path / "ray", "--ray", cluster.address)
    assert on_ray.returncode == 0, on_ray.stderr
    nodes = {
        line.rsplit(" ", 1)[1] for line in on_ray.stdout.splitlines() if " started on node " in line
    }
    assert nodes == {cluster.head_id[:12], cluster.worker_id[:12]}
    assert _outcomes(tmp_path / "ray") == _outcomes(tmp_path / "local")
    board = json.loads((tmp_path / "ray" / "board.json").read_text())["suites"]["contracts10"]
    assert [len(row["runs"]) for row in board] == [2, 2]  # seeds pooled, nodes alike
    state = json.loads((tmp_path / "ray" / "sweep.json").read_text())
    assert len(state["finished"]) == 4
    for run_dir in (tmp_path / "ray" / "cells").iterdir():  # written back, whole
        report = _cli("report", run_dir)
        assert report.returncode == 0, report.stderr


def test_evaluate_shards_samples_over_the_cluster_with_the_local_verdicts(
    cluster: LocalCluster, tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    samples = tmp_path / "samples.jsonl"
    with samples.open("w") as out:
        for copy in range(40):
            for task in contracts10.values():
                code = (
                    task.reference if copy % 3 else f"def {task.entry_point}(*a):\n    return 0\n"
                )
                out.write(
                    json.dumps({"task_id": task.id, "solution": f"{code}\n# {copy}\n"}) + "\n"
                )
    args = ["evaluate", samples, "--suite", "contracts10", "--no-efficiency", "--workers", "1"]
    local = _cli(*args, "--runs-dir", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    on_ray = _ray_cli(*args, "--runs-dir", tmp_path / "ray", "--ray", cluster.address)
    assert on_ray.returncode == 0, on_ray.stderr
    (here,) = (tmp_path / "local").iterdir()
    (there,) = (tmp_path / "ray").iterdir()
    lines = (there / "samples_results.jsonl").read_text()
    assert lines == (here / "samples_results.jsonl").read_text()
    assert sum(json.loads(line)["passed"] for line in lines.splitlines()) == 260


def test_no_cluster_at_the_address_says_how_to_start_one(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, ["scripted/none.json"], [0])
    result = _ray_cli("sweep", sweep, "--out", tmp_path / "o", "--ray", "127.0.0.1:9", timeout=180)
    assert result.returncode == 4
    assert "ray start --head" in result.stderr


def test_a_node_killed_mid_sweep_and_ctrl_c_lose_nothing_a_second_run_does_not_redo(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    slow = _slow_script(tmp_path, contracts10)
    sweep = _sweep(tmp_path, [slow], [0, 10, 20, 30])
    whole = _cli("sweep", sweep, "--out", tmp_path / "local")
    assert whole.returncode == 0, whole.stderr

    cluster = LocalCluster()
    try:
        out = tmp_path / "ray"
        proc = subprocess.Popen(
            [CODETRIAL, "sweep", str(sweep), "--out", str(out), "--ray", cluster.address],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        assert proc.stdout is not None
        for line in proc.stdout:  # the worker node dies with a cell of its own running
            if line.rstrip().endswith(f"started on node {cluster.worker_id[:12]}"):
                cluster.kill_worker()
                break
        rest, errors = proc.communicate(timeout=600)
        assert proc.returncode == 0, errors
        assert f"was lost with node {cluster.worker_id[:12]}: it runs again" in rest
        assert _outcomes(out) == _outcomes(tmp_path / "local")

        stopped = tmp_path / "stopped"
        proc = subprocess.Popen(
            [CODETRIAL, "sweep", str(sweep), "--out", str(stopped), "--ray", cluster.address],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            if " started on node " in line:
                time.sleep(1)
                proc.send_signal(signal.SIGINT)
                break
        _, errors = proc.communicate(timeout=120)
        assert proc.returncode == 130, errors
        assert f"continue with: codetrial sweep {sweep} --out {stopped}" in " ".join(errors.split())
        resumed = _ray_cli("sweep", sweep, "--out", stopped, "--ray", cluster.address)
        assert resumed.returncode == 0, resumed.stderr
        assert _outcomes(stopped) == _outcomes(tmp_path / "local")
        # the scratch folders of the actors stopped mid-cell are gone from the node
        owners = [
            p.name.split("-")[2] for p in Path(tempfile.gettempdir()).glob("codetrial-cell-*")
        ]
        assert [pid for pid in owners if pid.isdigit() and not Path(f"/proc/{pid}").exists()] == []
    finally:
        cluster.shutdown()
