"""Program tasks judged by a contest judge's rules and by LiveCodeBench's evaluator's
(`--rules livecodebench`): the same real sandboxed candidates, the verdicts each set
of rules gives, what a hostile program gains from the runner beside it under
LiveCodeBench's, and the rules recorded, shown and kept by `rerun`.

Every verdict expected under LiveCodeBench's rules is the one its own evaluator
(`nvidia-livecodebench`'s `evaluate_generations`) gives the same program:
`python -m bench.livecodebench_parity` compares them on the contest fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli, fenced

import codetrial
from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.gate import get_profile
from codetrial.kinds import Asked
from codetrial.kinds.program import PROGRAM
from codetrial.models.scripted import ScriptedBackend
from codetrial.records import Outcome, Verdict
from codetrial.report.board import entries
from codetrial.rerun import rejudge
from codetrial.sandbox import SandboxPolicy
from codetrial.tasks import ProgramTask, load_suite
from codetrial.tasks.programs import Case
from codetrial.verdict.livecodebench import module_of
from codetrial.verdict.outputs import difference
from codetrial.verdict.pool import JudgePool

ADD = ProgramTask(
    id="add",
    suite="rules",
    title="Add",
    statement="Print A + B.",
    samples=(Case("1", "3 4\n", "7\n"),),
    hidden=(Case("1", "10 -2\n", "8\n"),),
)
READ = "a, b = map(int, input().split())\n"
PASSED, FAILED, ERROR = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR


@pytest.fixture(scope="module")
def pool() -> Iterator[JudgePool]:
    prepared = PROGRAM.prepare([], None, None, "test")
    with JudgePool.for_tasks(1, SandboxPolicy(Limits()), prepared) as judges:
        yield judges


def judged(pool: JudgePool, code: str, rules: str | None, task: ProgramTask = ADD) -> Verdict:
    asked = Asked.of(get_profile("off"), "whole", None, rules=rules)
    return PROGRAM.check(pool, task, fenced(code), asked).result()


@pytest.mark.parametrize(
    ("code", "contest", "evaluators"),
    [
        pytest.param(READ + "print(a + b)\n", PASSED, PASSED, id="right"),
        pytest.param(READ + "print(float(a + b))\n", FAILED, PASSED, id="7.0 for 7"),
        pytest.param(READ + "print('0' + str(a + b))\n", FAILED, PASSED, id="07 for 7"),
        pytest.param(
            READ + "print('\\n', a + b, '  \\n\\n')\n", PASSED, PASSED, id="blank lines around"
        ),
        pytest.param(READ + "print(a, '+', b, '=')\nprint(a + b)\n", FAILED, FAILED, id="more"),
        pytest.param(
            "import sys\na, b = map(int, sys.stdin.buffer.read().split())\nprint(a + b)\n",
            PASSED,
            ERROR,
            id="sys.stdin.buffer",
        ),
        pytest.param(
            "a, b = map(int, open(0).read().split())\nprint(a + b)\n", PASSED, ERROR, id="open(0)"
        ),
        pytest.param(
            "import os\n" + READ + "os.write(1, f'{a + b}\\n'.encode())\n",
            PASSED,
            FAILED,
            id="written on descriptor 1",
        ),
        pytest.param(
            "from sys import stdin\n\nfor line in stdin:\n    print(sum(map(int, line.split())))\n",
            PASSED,
            FAILED,
            id="from sys import stdin, iterated",
        ),
        pytest.param(
            "from sys import stdin\n\na, b = map(int, stdin.readline().split())\nprint(a + b)\n",
            PASSED,
            PASSED,
            id="from sys import stdin, read by line",
        ),
        pytest.param(READ + "print(reduce(add, [a, b]))\n", ERROR, PASSED, id="names unimported"),
        pytest.param(
            "total = 0\n\n\ndef add(a, b):\n    global total\n    total = a + b\n\n\n"
            "add(*map(int, input().split()))\nprint(total)\n",
            PASSED,
            FAILED,
            id="a global statement",
        ),
        pytest.param(
            "def main():\n    " + READ + "    print(a + b)\n\n\n"
            "if __name__ == '__main__':\n    main()\n",
            PASSED,
            PASSED,
            id="the main guard last",
        ),
        pytest.param(
            "import sys\n\n\ndef main():\n    " + READ + "    print(a + b)\n\n\n"
            "if __name__ == '__main__':\n    main()\nsys.stdout.flush()\n",
            PASSED,
            FAILED,
            id="a statement after the main guard",
        ),
        pytest.param(
            READ + "\n\ndef down(n):\n    return 0 if n == 0 else down(n - 1)\n\n\n"
            "print(a + b + down(5000))\n",
            ERROR,
            PASSED,
            id="recursion 5000 deep",
        ),
        pytest.param(
            READ + "print(a + b + len(str(10 ** 5000)) - 5001)\n",
            ERROR,
            PASSED,
            id="an integer of 5001 digits",
        ),
        pytest.param(
            "import sys\n" + READ + "print(a + b)\nsys.exit(3)\n", ERROR, PASSED, id="sys.exit(3)"
        ),
        pytest.param(READ + "print(a + b)\nraise ValueError\n", ERROR, ERROR, id="a late raise"),
        pytest.param(
            "import os\n" + READ + "print(a + b, flush=True)\nos._exit(0)\n",
            PASSED,
            FAILED,
            id="os._exit(0)",
        ),
        pytest.param(
            "import sys\n" + READ + "print(a + b)\nsys.stdout.close()\n",
            PASSED,
            ERROR,
            id="sys.stdout.close()",
        ),
        pytest.param("import resource\n" + READ + "print(a + b)\n", PASSED, ERROR, id="resource"),
        pytest.param(
            "class Solution:\n    def add(self, a, b):\n        return a + b\n\n\n"
            + READ
            + "print(Solution().add(a, b))\n",
            PASSED,
            ERROR,
            id="a class named Solution",
        ),
        pytest.param(
            "from __future__ import annotations\n" + READ + "print(a + b)\n",
            PASSED,
            ERROR,
            id="from __future__",
        ),
    ],
)
def test_each_set_of_rules_gives_its_own_verdict(
    pool: JudgePool, code: str, contest: Outcome, evaluators: Outcome
) -> None:
    assert judged(pool, code, None).outcome is contest
    assert judged(pool, code, "contest").outcome is contest
    assert judged(pool, code, "livecodebench").outcome is evaluators


def test_a_sample_that_fails_under_livecodebench_rules_says_which_line(pool: JudgePool) -> None:
    verdict = judged(pool, READ + "print(a + b)\nprint()\nprint(a)\n", "livecodebench")
    assert verdict.detail == "sample case 1: wrong answer (expected 1 lines, got 3)"
    verdict = judged(pool, READ + "print(a - b)\n", "livecodebench")
    assert verdict.detail == "sample case 1: wrong answer (line 1: expected '7', got '-1')"
    assert verdict.feedback is not None and "Your program's output:" in verdict.feedback
    crashed = judged(pool, READ + "print(a + b)\nprint(1 / 0)\n", "livecodebench")
    assert crashed.outcome is ERROR and crashed.feedback is not None
    assert "ZeroDivisionError: division by zero" in crashed.feedback


@pytest.mark.parametrize(
    ("expected", "got", "same"),
    [
        ("7\n", "7", True),
        ("7\n", "7.0\n", True),
        ("7\n", "+07\n", True),
        ("1 2\n3\n", "\n\n1   2\t\n 3  \n\n", True),
        ("3.5\n", "3.5000000\n", True),
        ("yes\n", "yes \r\n", True),
        ("0.333333\n", "0.3333333\n", False),
        ("1 2\n3\n", "1 2 3\n", False),
        ("1\n2\n", "1\n\n2\n", False),
        ("a b\n", "a  b\n", False),
        ("YES\n", "yes\n", False),
        ("nan\n", "nan\n", True),
        ("1\n", "nan\n", False),
        ("sNaN\n", "sNaN\n", True),
        ("1\n", "sNaN\n", False),
    ],
)
def test_outputs_are_compared_as_livecodebench_compares_them(
    expected: str, got: str, same: bool
) -> None:
    assert (difference("livecodebench", expected, got) is None) is same


def test_the_module_is_the_evaluators_hoisted_imports_and_one_function() -> None:
    module = module_of(
        "import sys\nx = 1\nfrom math import gcd\nif __name__ == '__main__':\n    f()\n"
    )
    assert module is not None
    tail = module.split("sys.setrecursionlimit(50000)\n", 1)[1]
    assert tail == "\nimport sys\nfrom math import gcd\ndef wrapped_function():\n    x = 1\n    f()"
    assert module.startswith("from string import *\nfrom re import *\n")
    assert module_of("x = (\n") is None


def test_a_program_that_subverts_the_runner_gains_only_what_it_prints(pool: JudgePool) -> None:
    """The runner shares the program's process, so the program can rewrite how it
    exits and write on the runner's own descriptor: the trusted side still judges an
    exit and an output, as a program that printed them would be judged."""
    forged_exit = (
        "import os\nreal = os._exit\nos._exit = lambda code: real(0)\n"
        + READ
        + "print(a * b)\nraise ValueError('hidden by the exit')\n"
    )
    assert judged(pool, forged_exit, "livecodebench").outcome is FAILED
    to_the_runner = (
        "import os\n"
        + READ
        + "for fd in range(3, 10):\n"
        + "    try:\n        os.write(fd, b'passed\\n')\n    except OSError:\n        pass\n"
    )
    verdict = judged(pool, to_the_runner, "livecodebench")
    assert verdict.detail == "sample case 1: wrong answer (line 1: expected '7', got 'passed')"


def test_the_runner_holds_the_input_and_no_expected_output(pool: JudgePool) -> None:
    task = ProgramTask(
        id="token",
        suite="rules",
        title="Token",
        statement="Print the secret.",
        samples=(Case("1", "ask-7c1e\n", "tok3n-4f9a\n"),),
        hidden=(),
    )
    search = (  # the stack's names and every module's, and what they hold
        "import sys\n\nneedles = ['ask' + '-7c1e', 'tok' + '3n']\n\n\n"
        "def held():\n"
        "    frame, names = sys._getframe(), []\n"
        "    while frame is not None:\n"
        "        names += [frame.f_locals, frame.f_globals]\n"
        "        frame = frame.f_back\n"
        "    names += [vars(m) for m in list(sys.modules.values()) if hasattr(m, '__dict__')]\n"
        "    for value in [v for found in names for v in list(found.values())]:\n"
        "        yield value\n"
        "        if isinstance(value, dict):\n"
        "            yield from list(value.values())\n"
        "        elif isinstance(value, list | tuple):\n"
        "            yield from value\n\n\n"
        "print(*(any(isinstance(s, str) and n in s and s is not n for s in held()) "
        "for n in needles))\n"
    )
    verdict = judged(pool, search, "livecodebench", task)
    assert verdict.detail == (
        "sample case 1: wrong answer (line 1: expected 'tok3n-4f9a', got 'True False')"
    )


def test_rules_are_for_program_tasks_and_named_exactly() -> None:
    with pytest.raises(ConfigError, match="--rules is for program tasks"):
        codetrial.configure("contracts10", ["scripted/x.json"], rules="livecodebench")
    with pytest.raises(ConfigError, match="unknown rules 'lcb'; known: contest, livecodebench"):
        codetrial.configure("programs", ["scripted/x.json"], rules="lcb")
    config, _ = codetrial.configure("programs", ["scripted/x.json"], limit=1)
    assert config.rules == "contest"
    assert codetrial.configure("contracts10", ["scripted/x.json"])[0].rules is None


def test_a_run_records_its_rules_shows_them_and_rerun_judges_by_them(tmp_path: Path) -> None:
    task = {t.id: t for t in load_suite("programs")}["bracket-depth"]
    late_exit = f"{task.reference}\nimport sys\nsys.exit(3)\n"
    backend = ScriptedBackend({"Nesting Depth": [fenced(late_exit)]}, "scripted/late")
    run = codetrial.run(
        "programs",
        ["scripted/late"],
        runs_dir=tmp_path,
        name="evaluators",
        backends={"scripted/late": backend},
        task_ids=["bracket-depth"],
        rules="livecodebench",
    )
    (row,) = run.table()
    assert row["outcome"] == "passed"  # a contest judge calls exit code 3 a runtime error
    manifest = json.loads((run.path / "manifest.json").read_text())
    assert manifest["config"]["rules"] == "livecodebench"
    results = json.loads((run.path / "results.json").read_text())
    assert results["manifest"]["config"]["rules"] == "livecodebench"
    report = (run.path / "report.html").read_text()
    assert "gate contest · rules livecodebench" in report
    assert "Programs judged by LiveCodeBench's rules" in report
    (entry,) = entries(run.path, {})
    assert entry.conditions["rules"] == "livecodebench"
    assert rejudge(run.path, workers=1).identical


def test_check_judges_a_file_by_the_rules_given(tmp_path: Path) -> None:
    task = {t.id: t for t in load_suite("programs")}["bracket-depth"]
    file = tmp_path / "late.py"
    file.write_text(f"{task.reference}\nimport sys\nsys.exit(3)\n")
    base = ("check", file, "--task", "bracket-depth", "--suite", "programs")
    contest = cli(*base)
    assert contest.returncode == 1, contest.stderr
    assert "rules: contest" in contest.stdout and "error" in contest.stdout
    evaluators = cli(*base, "--rules", "livecodebench")
    assert evaluators.returncode == 0, evaluators.stderr
    assert "rules: livecodebench" in evaluators.stdout
    refused = cli("check", file, "--task", "two_sum", "--rules", "livecodebench")
    assert refused.returncode == 2 and "--rules is for program tasks" in refused.stderr
