"""Per-candidate cost of isolation, measured in one run on one machine.

Compares, for a trivial candidate (`def f(x): return x + 1`, called once):
  bare         `python -I -S -c pass`: the floor for starting any interpreter
  subprocess   a plain subprocess that defines the candidate and calls it (no limits)
  pytest       one `python -m pytest` subprocess per candidate, as a naive harness does
  session      codetrial's sandbox: fork a limited child from the warm worker
               (bubblewrap + seccomp + cgroup + rlimits), load, call once, exit
  judge        codetrial's whole verdict: gate, session and the task's test file,
               whose plain test functions run directly
  judge-full   the same with a test file that needs a pytest session (parametrize)
Prints medians (ms) and ratios to `bare`. Usage: python -m bench.sandbox_overhead [N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from codetrial.config import Limits
from codetrial.gate import get_profile
from codetrial.records import Candidate, Outcome
from codetrial.sandbox import SandboxPolicy, open_sandbox
from codetrial.sandbox.launch import interpreter
from codetrial.tasks import load_folder
from codetrial.verdict import judge

CODE = "def f(x):\n    return x + 1\n"
TEST = "from candidate import f\n\n\ndef test_f():\n    assert f(1) == 2\n"
PARAMETRIZED = (
    "import pytest\nfrom candidate import f\n\n\n"
    "@pytest.mark.parametrize('x', [1])\ndef test_f(x):\n    assert f(x) == x + 1\n"
)


def median_ms(action: Callable[[], None], runs: int) -> float:
    action()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def main(runs: int) -> None:
    python = str(interpreter())
    folder = Path(tempfile.mkdtemp(prefix="codetrial-bench-"))
    tasks = {}
    for name, test in (("plain", TEST), ("parametrized", PARAMETRIZED)):
        task_dir = folder / name
        task_dir.mkdir()
        (task_dir / "spec.md").write_text("# f\n\n```python\ndef f(x: int) -> int:\n```\n")
        (task_dir / "test_f.py").write_text(test)
        tasks[name] = load_folder(task_dir)
    (folder / "candidate.py").write_text(CODE)
    (folder / "test_f.py").write_text(TEST)
    limits = Limits()
    sandbox = open_sandbox(SandboxPolicy(limits))
    profile = get_profile("builtins-only")

    def bare() -> None:
        subprocess.run([python, "-I", "-S", "-c", "pass"], check=True)

    def plain() -> None:
        subprocess.run([python, "-I", "-S", "-c", CODE + "f(1)\n"], check=True)

    def pytest_subprocess() -> None:
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_f.py"],
            cwd=folder,
            check=True,
            capture_output=True,
        )

    def session() -> None:
        with sandbox.session(CODE) as candidate:
            assert candidate.call("f", [1], {}) == 2

    def whole(task: str) -> Callable[[], None]:
        def run() -> None:
            verdict = judge(Candidate(CODE, CODE), tasks[task], profile, sandbox, limits)
            assert verdict.outcome is Outcome.PASSED

        return run

    rows = [
        ("bare", median_ms(bare, runs)),
        ("subprocess", median_ms(plain, runs)),
        ("pytest", median_ms(pytest_subprocess, max(5, runs // 5))),
        ("session", median_ms(session, runs)),
        ("judge", median_ms(whole("plain"), runs)),
        ("judge-full", median_ms(whole("parametrized"), runs)),
    ]
    base = rows[0][1]
    print(f"isolation: {sandbox.isolation}; {runs} runs each, medians")
    for name, ms in rows:
        print(f"{name:>11}  {ms:8.2f} ms   {ms / base:6.2f}x bare")
    sandbox.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
