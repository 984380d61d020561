"""Killing a run at any moment loses at most the attempt in flight; --resume finishes it."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from codetrial.tasks import Task
from tests.conftest import CLI_ENV, CODETRIAL, fenced, without_modes


def _rows(db: Path) -> dict[tuple[str, int], str]:
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        try:
            rows = conn.execute("SELECT task_id, attempt, saved_at FROM attempts").fetchall()
        except sqlite3.OperationalError:
            return {}
    return {(task, attempt): saved for task, attempt, saved in rows}


def test_kill_then_resume(tmp_path: Path, contracts10: dict[str, Task]) -> None:
    script = {f"def {t.entry_point}(": [fenced(t.reference or "")] for t in contracts10.values()}
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [CODETRIAL, "run", "--model", f"scripted/{path}", "--runs-dir", str(runs)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    db = None
    while time.monotonic() < deadline:
        found = list(runs.glob("*/trial.sqlite")) if runs.exists() else []
        if found and len(_rows(found[0])) >= 3:
            db = found[0]
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert db is not None, "the run stored nothing in time"
    before = _rows(db)
    assert 3 <= len(before) < 10

    result = subprocess.run(
        [CODETRIAL, "run", "--resume", str(db.parent)],
        capture_output=True,
        text=True,
        timeout=300,
        env=CLI_ENV,
    )
    assert result.returncode == 0, result.stderr
    after = _rows(db)
    assert len(after) == 10
    assert all(after[key] == saved for key, saved in before.items())
    assert "10/10" in result.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    manifest = json.loads((db.parent / "manifest.json").read_text())
    assert len(manifest["resumed_at"]) == 1


def test_ctrl_c_says_how_to_resume(tmp_path: Path, contracts10: dict[str, Task]) -> None:
    loop = "    while True:\n        pass\n"
    script = {
        f"def {t.entry_point}(": [fenced(f"def {t.entry_point}(*args):\n{loop}")]
        for t in contracts10.values()
    }
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(script))
    args = [
        CODETRIAL,
        "run",
        "--model",
        f"scripted/{path}",
        "--runs-dir",
        str(tmp_path / "r"),
        "--timeout",
        "2",
        "--gate",
        "off",
        "--repair-attempts",
        "0",
    ]
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=CLI_ENV,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(tmp_path.glob("r/*/trial.sqlite")):
        time.sleep(0.1)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "codetrial run --resume" in err and "Traceback" not in err


def test_a_run_from_before_store_schema_numbers_resumes(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    """Such a run has schema 1's layout without the number in either file."""
    script = {f"def {t.entry_point}(": [fenced(t.reference or "")] for t in contracts10.values()}
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    args = ["--task", "palindrome", "--task", "two_sum", "--runs-dir", str(tmp_path / "runs")]
    first = subprocess.run(
        [CODETRIAL, "run", "--model", f"scripted/{path}", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=CLI_ENV,
    )
    assert first.returncode == 0, first.stderr
    (db,) = tmp_path.glob("runs/*/trial.sqlite")
    manifest_path = db.parent / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["schema_version"]
    manifest_path.write_text(json.dumps(manifest))
    without_modes(db)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 0")
        conn.execute("DELETE FROM attempts WHERE task_id = 'two_sum'")
    before = _rows(db)

    result = subprocess.run(
        [CODETRIAL, "run", "--resume", str(db.parent)],
        capture_output=True,
        text=True,
        timeout=300,
        env=CLI_ENV,
    )
    assert result.returncode == 0, result.stderr
    after = _rows(db)
    assert sorted(after) == [("palindrome", 0), ("two_sum", 0)]
    assert after[("palindrome", 0)] == before[("palindrome", 0)]
