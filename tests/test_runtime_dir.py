"""The sandbox's runtime folder (the worker's files and the seccomp filters, in the
temporary folder) goes when its process exits. A process killed leaves its folder
behind; the next process to start clears it, but never the folder of a process that
lives, nor one whose process may still be making it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

STARTS = "from codetrial.sandbox.launch import runtime_dir; print(runtime_dir(), flush=True)"


def _started(env: dict[str, str]) -> tuple[subprocess.Popen[str], Path]:
    """A process that made its runtime folder and waits for its standard input to
    close, with that folder."""
    process = subprocess.Popen(
        [sys.executable, "-c", f"{STARTS}; import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_a_killed_process_s_runtime_folder_is_cleared_and_a_live_one_s_kept(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed, left = _started(env)
    killed.kill()
    killed.wait()
    assert left.parent == tmp_path and left.is_dir()  # no exit handler ran
    live, kept = _started(env)
    unfinished = tmp_path / "codetrial-runtime-unfinished"  # not yet locked by its maker
    unfinished.mkdir()
    try:
        started = subprocess.run(
            [sys.executable, "-c", STARTS], env=env, capture_output=True, text=True, check=True
        )
        assert not left.exists()
        assert kept.is_dir() and (kept / "worker.py").is_file() and unfinished.is_dir()
        assert not Path(started.stdout.strip()).exists()  # gone at its own exit
    finally:
        assert live.stdin is not None
        live.stdin.close()
        live.wait()
    assert not kept.exists()
