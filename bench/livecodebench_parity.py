"""codetrial, under both its rules, against LiveCodeBench's own evaluator, on the same
candidates, in one run.

The problems are the contest loaders' fixtures (tests/fixtures/contests: LiveCodeBench's
release format, APPS's and CodeContests' standard-input problems), read by codetrial's
loaders, and two more problems this script writes in LiveCodeBench's release format (its
private cases a base64, zlib-compressed pickle, as newer releases hold them): one whose
answer is several lines, one whose answer is a decimal number printed to six places.
Every problem gets the same candidates, written here from its right answer
(`solve`), no model: right ones in several forms (plain, `__main__` guard, `open(0)`,
`sys.stdin.buffer`, no final newline, blank lines and spaces around the answer, noise
on standard error, the answer's lines joined or spread apart, the answer written on
file descriptor 1 without `sys.stdout`, `from sys import stdin` read line by line or
iterated, a `global` statement, a statement after the `__main__` guard, `quit()` or
`os._exit(0)` after the answer, a class named `Solution`) and wrong ones (a wrong
token, a crash after the right answer, an exit code other than 0 after it, a loop that
never ends, a leading zero, an integer printed as a float, a number off by a
ten-millionth of it, recursion 5000 deep under Python's limit of 1000, `stdin` read
without importing it).

Both judge every candidate on every case of its problem, samples first: codetrial as
`codetrial check` does (`ProgramKind.check`, the real sandbox, two workers, the time
limits it calibrates or reads), once under each of its rules (`--rules contest`, a
contest judge's, and `--rules livecodebench`, LiveCodeBench's evaluator's, which
should agree with it on every verdict); LiveCodeBench with `evaluate_generations` from the
`nvidia-livecodebench` package (`make livecodebench`), the judging that its
`codegen_metrics` wraps (which adds pass@k), one candidate a task as `codegen_metrics`
hands them over, two processes, its timeout set to codetrial's CPU limit for that
problem rounded up (LiveCodeBench's own default is 6 wall seconds), its standard input
/dev/null (a program that opens descriptor 0 there reads the evaluator's own). Prints
per candidate the three verdicts, with why each failed, and whether each of
codetrial's agrees with LiveCodeBench's; the totals under each rule set; and each
one's wall time (median of `--repeat` runs; codetrial's includes opening its
sandboxes, its calibration cache warm), with every candidate and without the endless
loops, with the load average.
Usage: python -m bench.livecodebench_parity [--repeat 3]   (after `make livecodebench`)
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import pickle
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from livecodebench.evaluation.compute_code_generation_metrics import evaluate_generations

from codetrial.config import RULES, TIME_FACTOR, TIME_FLOOR, Limits
from codetrial.gate import get_profile
from codetrial.kinds import Asked, Suite, load_suite
from codetrial.kinds.program import PROGRAM
from codetrial.records import Outcome, Verdict
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import ProgramTask
from codetrial.verdict.pool import JudgePool

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "contests"
WORKERS = 2

# Each problem's right answer as a function of its input text, in Python source.
SOLVE = {
    "abc901_a": "def solve(data):\n    a, b = map(int, data.split())\n    return str(a + b)\n",
    "1801A": "def solve(data):\n    return data.split()[0][::-1]\n",
    "abc950_b": "def solve(data):\n    return str(max(map(int, data.split()[1:])))\n",
    "apps/4000": (
        "def solve(data):\n    n = int(data.split()[0])\n    return str(n * (n + 1) // 2)\n"
    ),
    "1003_A. Distinct Coins": "def solve(data):\n    return str(len(set(data.split()[1:])))\n",
    "abc990_c": (
        "def solve(data):\n"
        "    numbers = sorted(map(int, data.split()[1:]))\n"
        '    return "\\n".join(map(str, numbers))\n'
    ),
    "abc990_d": (
        'def solve(data):\n    a, b = map(int, data.split())\n    return f"{a / b:.6f}"\n'
    ),
}

# Each candidate: its name and its program's body, which follows `import os`,
# `import sys` and the problem's `solve`.
CANDIDATES: list[tuple[str, str]] = [
    ("right", "print(solve(sys.stdin.read()))\n"),
    (
        "main guard",
        "def main():\n    print(solve(sys.stdin.read()))\n\n\n"
        'if __name__ == "__main__":\n    main()\n',
    ),
    ("open(0)", "print(solve(open(0).read()))\n"),
    (
        "fast I/O (buffer)",
        "sys.stdout.buffer.write((solve(sys.stdin.buffer.read().decode()) + '\\n').encode())\n",
    ),
    ("no final newline", "sys.stdout.write(solve(sys.stdin.read()))\n"),
    (
        "spaces, CRLF, blank lines around",
        "answer = solve(sys.stdin.read()).replace('\\n', ' \\r\\n')\n"
        "sys.stdout.write('\\n\\n' + answer + '  \\n\\n\\n')\n",
    ),
    (
        "noise on stderr",
        "print('debug', file=sys.stderr)\nprint(solve(sys.stdin.read()))\n",
    ),
    ("wrong token", "print(solve(sys.stdin.read()) + '1')\n"),
    ("crash after the answer", "print(solve(sys.stdin.read()))\nraise ValueError('late')\n"),
    ("exit code 3 after the answer", "print(solve(sys.stdin.read()))\nsys.exit(3)\n"),
    ("endless loop", "while True:\n    pass\n"),
    ("leading zero", "print('0' + solve(sys.stdin.read()))\n"),
    (
        "number as float",
        "answer = solve(sys.stdin.read())\n"
        "print('\\n'.join(repr(float(line)) if line.lstrip('-').isdigit() else line\n"
        "                 for line in answer.split('\\n')))\n",
    ),
    (
        "number off by 1e-7 of it",
        "answer = solve(sys.stdin.read())\n"
        "try:\n    print(f'{float(answer) * (1 + 1e-7) :.9f}')\n"
        "except ValueError:\n    print(answer + '1')\n",
    ),
    ("lines joined by spaces", "print(' '.join(solve(sys.stdin.read()).split()))\n"),
    (
        "a blank line between lines",
        "print('\\n\\n'.join(solve(sys.stdin.read()).split('\\n')))\n",
    ),
    (
        "written on fd 1",
        "os.write(1, (solve(sys.stdin.read()) + '\\n').encode())\n",
    ),
    (
        "from sys import stdin, lines read",
        "from sys import stdin\n\nprint(solve(' '.join(stdin.readlines())))\n",
    ),
    (
        "from sys import stdin, iterated",
        "from sys import stdin\n\nprint(solve(''.join(line for line in stdin)))\n",
    ),
    (
        "a global statement",
        "text = ''\n\n\ndef read():\n    global text\n    text = sys.stdin.read()\n\n\n"
        "read()\nprint(solve(text))\n",
    ),
    (
        "a statement after the main guard",
        "def main():\n    print(solve(sys.stdin.read()))\n\n\n"
        'if __name__ == "__main__":\n    main()\nsys.stdout.flush()\n',
    ),
    (
        "recursion 5000 deep",
        "def read(depth):\n    return sys.stdin.read() if depth == 0 else read(depth - 1)\n\n\n"
        "print(solve(read(5000)))\n",
    ),
    ("quit() after the answer", "print(solve(sys.stdin.read()))\nquit()\n"),
    (
        "os._exit(0) after the answer",
        "print(solve(sys.stdin.read()), flush=True)\nos._exit(0)\n",
    ),
    ("stdin never imported", "print(solve(stdin.read()))\n"),
    (
        "a class named Solution",
        "class Solution:\n    def answer(self, data):\n        return solve(data)\n\n\n"
        "print(Solution().answer(sys.stdin.read()))\n",
    ),
]

# Two problems in LiveCodeBench's release format, for answers the fixtures lack.
EXTRA = [
    {
        "question_title": "Sort",
        "question_content": "Read N and N integers; print them in increasing order, one a line.",
        "platform": "atcoder",
        "question_id": "abc990_c",
        "contest_id": "abc990",
        "contest_date": "2025-03-01T00:00:00",
        "cases": [
            ("3\n3 1 2\n", "1\n2\n3\n"),
            ("1\n5\n", "5\n"),
            ("4\n9 -1 9 0\n", "-1\n0\n9\n9\n"),
        ],
    },
    {
        "question_title": "Divide",
        "question_content": (
            "Read A and B; print A / B. Your answer is correct when its absolute or "
            "relative error is at most 10^{-6}."
        ),
        "platform": "atcoder",
        "question_id": "abc990_d",
        "contest_id": "abc990",
        "contest_date": "2025-03-01T00:00:00",
        "cases": [("7 2\n", "3.500000\n"), ("1 3\n", "0.333333\n"), ("10 4\n", "2.500000\n")],
    },
]


def write_extra(path: Path) -> None:
    """EXTRA as a LiveCodeBench release file: the first case public, the others
    private, pickled and compressed as newer releases hold them."""
    with path.open("w") as handle:
        for problem in EXTRA:
            cases = [
                {"input": given, "output": expected, "testtype": "stdin"}
                for given, expected in problem["cases"]
            ]
            packed = zlib.compress(pickle.dumps(json.dumps(cases[1:])))
            record = {k: v for k, v in problem.items() if k != "cases"}
            record |= {
                "starter_code": "",
                "difficulty": "easy",
                "public_test_cases": json.dumps(cases[:1]),
                "private_test_cases": base64.b64encode(packed).decode(),
                "metadata": "{}",
            }
            handle.write(json.dumps(record) + "\n")


def cut(text: str, size: int = 60) -> str:
    """`text` on one line, at most `size` characters."""
    line = " ".join(text.replace("|", "/").split())
    return line if len(line) <= size else line[: size - 3] + "..."


def program(task: ProgramTask, body: str) -> str:
    return f"import os\nimport sys\n\n{SOLVE[task.id]}\n\n{body}"


def lcb_sample(task: ProgramTask) -> dict[str, str]:
    """The problem as LiveCodeBench's evaluator takes it (its
    `CodeGenerationProblem.get_evaluation_sample`): public cases, then private."""
    cases = [*task.samples, *task.hidden]
    return {
        "input_output": json.dumps(
            {
                "inputs": [c.input for c in cases],
                "outputs": [c.output for c in cases],
                "fn_name": None,
            }
        )
    }


def lcb_timeout(task: ProgramTask) -> int:
    """codetrial's largest CPU limit on the problem, in whole seconds."""
    return math.ceil(max(task.seconds(name)[0] for name, _ in task.named_cases))


@contextmanager
def silenced() -> Iterator[None]:
    """Descriptors 0, 1 and 2 on /dev/null: a candidate LiveCodeBench runs reads and
    writes the evaluator's own (on descriptor 0 or 1, or what it prints before its
    output is captured), and its progress bars go to standard error, which must stay
    a file (its faulthandler needs the descriptor)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(0), os.dup(1), os.dup(2)]
    with open(os.devnull, "r+") as null:
        for descriptor in (0, 1, 2):
            os.dup2(null.fileno(), descriptor)
    try:
        yield
    finally:
        for descriptor, copy in enumerate(saved):
            os.dup2(copy, descriptor)
            os.close(copy)


def lcb_judge(
    tasks: list[ProgramTask], candidates: list[tuple[str, str]]
) -> tuple[dict[str, list[tuple[bool, str]]], float]:
    """LiveCodeBench's verdicts per task id (True when every case passed, with what its
    evaluator said of the first that did not), and the seconds it took, its problems
    grouped by timeout."""
    verdicts: dict[str, list[tuple[bool, str]]] = {}
    started = time.perf_counter()
    for timeout in sorted({lcb_timeout(t) for t in tasks}):
        group = [t for t in tasks if lcb_timeout(t) == timeout]
        pairs = [(t, program(t, body)) for t in group for _, body in candidates]
        with silenced():
            results, metadata = evaluate_generations(
                [lcb_sample(t) for t, _ in pairs],
                [[code] for _, code in pairs],
                num_process_evaluate=WORKERS,
                timeout=timeout,
            )
        for index, (task, _) in enumerate(pairs):
            said = metadata[index][0]
            verdicts.setdefault(task.id, []).append(
                (
                    all(r is True for r in results[index][0]),
                    str(said.get("error") or said.get("error_message") or ""),
                )
            )
    return verdicts, time.perf_counter() - started


def codetrial_judge(
    suites: list[Suite[ProgramTask]], candidates: list[tuple[str, str]], rules: str
) -> tuple[dict[str, list[Verdict]], list[ProgramTask], float]:
    """codetrial's verdicts under `rules` per task id, the tasks with their time limits,
    and the seconds it took (opening the pool included)."""
    asked = Asked.of(get_profile("contest"), "whole", None, rules=rules)
    started = time.perf_counter()
    prepared = PROGRAM.prepare([], None, None, "codetrial check")
    with JudgePool.for_tasks(WORKERS, SandboxPolicy(Limits()), prepared) as pool:
        timed = [
            task
            for suite in suites
            for task in PROGRAM.timed(suite, pool, factor=TIME_FACTOR, floor=TIME_FLOOR)
        ]
        pending = {
            task.id: [
                PROGRAM.check(pool, task, f"```python\n{program(task, body)}```", asked)
                for _, body in candidates
            ]
            for task in timed
        }
        outcomes = {
            task_id: [future.result() for future in futures] for task_id, futures in pending.items()
        }
    return outcomes, timed, time.perf_counter() - started


def said(verdict: Verdict) -> str:
    if verdict.detail:
        return f"{verdict.outcome.value} ({cut(verdict.detail)})"
    return verdict.outcome.value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    folder = Path(tempfile.mkdtemp(prefix="codetrial-bench-"))
    os.environ["CODETRIAL_CACHE"] = str(folder / "cache")
    extra = folder / "extra.jsonl"
    write_extra(extra)
    suites: list[Suite[ProgramTask]] = [
        load_suite("livecodebench", None, FIXTURES / "livecodebench.jsonl"),
        load_suite("livecodebench", None, extra),
        load_suite("apps", None, FIXTURES / "apps.jsonl"),
        load_suite("codecontests", None, FIXTURES / "codecontests.jsonl"),
    ]
    ours: dict[str, dict[str, list[Verdict]]] = {}
    for rules in RULES:  # the first fills the calibration cache
        ours[rules], timed, _ = codetrial_judge(suites, CANDIDATES, rules)
    theirs, _ = lcb_judge(timed, CANDIDATES)
    ending = [c for c in CANDIDATES if c[0] != "endless loop"]
    load = os.getloadavg()
    seconds: dict[tuple[str, str], float] = {}
    for label, candidates in (("every candidate", CANDIDATES), ("but the endless loop", ending)):
        for rules in RULES:
            seconds[label, rules] = statistics.median(
                codetrial_judge(suites, candidates, rules)[2] for _ in range(repeat)
            )
        seconds[label, "LiveCodeBench"] = statistics.median(
            lcb_judge(timed, candidates)[1] for _ in range(repeat)
        )
    load_after = os.getloadavg()

    print(
        f"{len(timed)} problems x {len(CANDIDATES)} candidates; "
        f"{sum(len(t.named_cases) for t in timed)} cases; {WORKERS} workers each"
    )
    print(
        "| problem | candidate | codetrial, contest rules | codetrial, livecodebench rules "
        "| LiveCodeBench | agree (contest) | agree (livecodebench) |"
    )
    print("|---|---|---|---|---|---|---|")
    agree = dict.fromkeys(RULES, 0)
    for task in timed:
        rows = zip(
            CANDIDATES, *(ours[rules][task.id] for rules in RULES), theirs[task.id], strict=True
        )
        for (name, _), contest, evaluators, (passed, why) in rows:
            same = {
                rules: (verdict.outcome is Outcome.PASSED) == passed
                for rules, verdict in zip(RULES, (contest, evaluators), strict=True)
            }
            for rules in RULES:
                agree[rules] += same[rules]
            theirs_said = "passed" if passed else f"failed ({cut(why)})"
            marks = " | ".join("yes" if same[rules] else "**no**" for rules in RULES)
            print(
                f"| {task.id} | {name} | {said(contest)} | {said(evaluators)} | {theirs_said} "
                f"| {marks} |"
            )
    total = len(timed) * len(CANDIDATES)
    print()
    for rules in RULES:
        print(
            f"{rules} rules: verdicts agree with LiveCodeBench's on {agree[rules]} of {total}; "
            f"differ on {total - agree[rules]}"
        )
    print(f"\nwall time, median of {repeat} runs each:")
    for label in ("every candidate", "but the endless loop"):
        theirs_s = seconds[label, "LiveCodeBench"]
        ours_said = ", ".join(
            f"codetrial ({rules}) {seconds[label, rules]:6.2f} s" for rules in RULES
        )
        ratios = ", ".join(f"{theirs_s / seconds[label, rules]:.2f} ({rules})" for rules in RULES)
        print(
            f"  {label:21} {ours_said}, LiveCodeBench {theirs_s:6.2f} s; "
            f"LiveCodeBench / codetrial {ratios}"
        )
    print(
        f"load average (1, 5, 15 min) {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before, "
        f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} after; "
        f"{os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
