"""The process sandbox against code that misbehaves: limits hold, nothing outlives a run."""

from __future__ import annotations

import os
import signal
import time

import pytest

from codetrial.config import Limits
from codetrial.errors import SandboxError
from codetrial.sandbox import ProcessSandbox, SandboxRequest, SandboxResult

LIMITS = Limits(timeout_s=3, cpu_s=2, memory_mb=512, file_size_mb=1, output_bytes=10_000)


def _run(sandbox: ProcessSandbox, code: str, **extra) -> SandboxResult:  # type: ignore[no-untyped-def]
    request = SandboxRequest(files={"main.py": code}, argv=("python", "main.py"), limits=LIMITS)
    for key, value in extra.items():
        request = SandboxRequest(**{**request.__dict__, key: value})
    return sandbox.run(request)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().split()[2] != "Z"


def test_clean_run_and_read_back(sandbox: ProcessSandbox) -> None:
    result = _run(
        sandbox, "open('out.txt', 'w').write('hi')\nprint('done')", read_back=("out.txt",)
    )
    assert result.run.exit_code == 0 and result.run.signal is None
    assert result.run.stdout.strip() == "done"
    assert result.files == {"out.txt": b"hi"}


def test_wall_timeout_kills_the_whole_group(sandbox: ProcessSandbox) -> None:
    code = (
        "import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    time.sleep(1000)\n"
        "print(pid, flush=True)\n"
        "time.sleep(1000)\n"
    )
    started = time.monotonic()
    result = _run(sandbox, code)
    assert result.run.timed_out
    assert time.monotonic() - started < LIMITS.timeout_s + 2
    assert not _alive(int(result.run.stdout.split()[0]))


def test_cpu_limit_ends_a_busy_loop(sandbox: ProcessSandbox) -> None:
    result = _run(sandbox, "while True:\n    pass\n")
    assert result.run.signal == signal.SIGXCPU or result.run.timed_out
    assert result.run.cpu_s >= LIMITS.cpu_s - 0.5


def test_output_is_capped(sandbox: ProcessSandbox) -> None:
    result = _run(sandbox, "while True:\n    print('x' * 1000)\n")
    assert result.run.output_overflow
    assert len(result.run.stdout) <= LIMITS.output_bytes


def test_memory_limit(sandbox: ProcessSandbox) -> None:
    result = _run(sandbox, "x = bytearray(2 * 1024 ** 3)\n")
    assert result.run.exit_code == 1
    assert "MemoryError" in result.run.stderr


def test_file_size_limit(sandbox: ProcessSandbox) -> None:
    result = _run(sandbox, "open('big', 'wb').write(b'x' * (4 * 1024 * 1024))\n")
    assert result.run.exit_code != 0


def test_environment_carries_no_parent_secrets(
    sandbox: ProcessSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODETRIAL_TEST_SECRET", "hunter2")
    result = _run(sandbox, "import os\nprint(sorted(os.environ.items()))\n")
    assert "hunter2" not in result.run.stdout
    assert "CODETRIAL_TEST_SECRET" not in result.run.stdout


def test_stdin_is_empty(sandbox: ProcessSandbox) -> None:
    result = _run(sandbox, "import sys\nprint(repr(sys.stdin.read()))\n")
    assert result.run.stdout.strip() == "''"


def test_each_run_gets_a_fresh_directory(sandbox: ProcessSandbox) -> None:
    _run(sandbox, "open('left_behind.txt', 'w').write('x')\n")
    result = _run(sandbox, "import os\nprint(os.path.exists('left_behind.txt'))\n")
    assert result.run.stdout.strip() == "False"


def test_missing_interpreter_is_a_sandbox_error() -> None:
    with pytest.raises(SandboxError, match="could not start"):
        _run(ProcessSandbox(python="/nonexistent/python"), "pass\n")
