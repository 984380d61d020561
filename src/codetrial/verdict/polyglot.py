"""Judge a workspace in a compiled language: its build and its test runner, in the sandbox.

Each language is data and a parser (`Language`): the test names its test files
declare, how to disguise them for a run, the steps that build and test the
workspace, and how to read the runner's machine-readable report on the trusted side
into the per-test records Python's tests give. A build that fails is a `syntax_error`
(as aider's benchmark counts it), the compiler's message its feedback.

Trust level "in-sandbox": a test runner runs the candidate's code in its own process,
so what it reports is only as honest as that process; the candidate can print
anything the runner prints. What keeps a candidate from forging a pass:

- the steps are the trusted side's, started by the in-sandbox runner (nativerun.py)
  before any candidate code runs; the records come on its channel, never inherited
  by a step's process nor reachable through /proc, and carry the run's nonce;
- every test is renamed for the run with a tag of its own, drawn afresh, and the test
  sources are removed once the tests are built, so that a line that reports a test
  must name it as this run's binary alone knows it; the trusted side maps the tags
  back and requires each test's result exactly once;
- a sentinel test, planted under a copy of a real test's name with a tag of its own,
  fails by construction: a report that has it pass was not written by the runner,
  and the verdict is `tampered`;
- what would let the candidate read the tests while it is built (Go's `go:embed`) is
  refused before anything runs.

What it cannot resist: code that reads the tags from its own binary and writes a
report for exactly the real tests, telling them from the sentinel by chance.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from codetrial.config import Limits
from codetrial.records import Outcome, TestOutcome, TestResult, Verdict, Visibility
from codetrial.sandbox import Sandbox, TestRun
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict.decide import stopped_or_tampered, usage_of
from codetrial.verdict.toolchains import Toolchain, find_toolchain
from codetrial.verdict.workspace import expected_tests, signed, trimmed

OUTPUT_CAP = 1 << 20
_TAG_BYTES = 6
BUILD, TEST = "build", "test"


@dataclass(frozen=True)
class Reported:
    """One test as a runner's report has it: its name (as renamed for the run), its
    outcome, and its output (a failure's text)."""

    name: str
    outcome: TestOutcome
    output: str


@dataclass(frozen=True)
class Disguised:
    """The test files as a run builds them: renamed tests (run name -> file::name)
    and the sentinel's run name, which must fail."""

    files: dict[str, str]
    names: dict[str, str]
    sentinel: str


@dataclass(frozen=True)
class Language:
    """What judging a language takes: `tests` (the test names the test files declare,
    as file::name), `disguise` (the test files renamed for a run, with a sentinel),
    `steps` (the build then the test steps, given the run's secret token), `parse`
    (the test step's output -> what it reports of each test, and what it printed
    that belongs to no test) and `refused` (why a candidate's
    files may not be built, when they may not)."""

    name: str
    tests: Callable[[Mapping[str, str]], list[tuple[str, str]]]
    disguise: Callable[[Mapping[str, str], list[tuple[str, str]]], Disguised]
    steps: Callable[[Mapping[str, str], Disguised, str], list[dict[str, object]]]
    parse: Callable[[str], tuple[list[Reported], str]]
    refused: Callable[[Mapping[str, str]], str | None]


def _tag() -> str:
    return secrets.token_hex(_TAG_BYTES)


# --- Go: `go test -c` builds the tests, `go tool test2json` runs them (go test -json) ---

_GO_TEST = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)
_GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.MULTILINE)
_GO_EMBED = re.compile(r"//go:embed|\"embed\"")


def _go_tests(tests: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(path, name) for path, source in tests.items() for name in _GO_TEST.findall(source)]


def _go_disguise(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    names: dict[str, str] = {}
    files: dict[str, str] = {}
    for path, source in tests.items():
        renamed: dict[str, str] = {}

        def rename(match: re.Match[str], renamed: dict[str, str] = renamed) -> str:
            run_name = f"{match.group(1)}_{_tag()}"
            renamed[match.group(1)] = run_name
            return match.group(0).replace(match.group(1), run_name, 1)

        files[path] = _GO_TEST.sub(rename, source)
        names |= {run_name: f"{path}::{name}" for name, run_name in renamed.items()}
    copied = secrets.choice([name for _, name in declared]) if declared else "Test"
    sentinel = f"{copied}_{_tag()}"
    package = _GO_PACKAGE.search(next(iter(tests.values()), ""))
    files[f"{_tag()}_test.go"] = (
        f'package {package.group(1) if package else "main"}\n\nimport "testing"\n\n'
        f'func {sentinel}(t *testing.T) {{\n\tt.Fatal("expected failure")\n}}\n'
    )
    return Disguised(files, names, sentinel)


def _go_steps(
    tests: Mapping[str, str], disguised: Disguised, token: str
) -> list[dict[str, object]]:
    binary = f"/tmp/{token}.test"
    return [
        {
            "name": BUILD,
            "argv": ["go", "test", "-c", "-vet=off", "-o", binary, "."],
            "stop": True,
            "remove": sorted(disguised.files),
        },
        {
            "name": TEST,
            "argv": ["go", "tool", "test2json", "-t", binary, "-test.v", "-test.run", "^Test"],
        },
    ]


def _go_parse(output: str) -> tuple[list[Reported], str]:
    """test2json's events: each top-level test's pass, fail or skip, with the output
    of it and its subtests."""
    outputs: dict[str, list[str]] = {}
    reported: list[Reported] = []
    other: list[str] = []
    for line in output.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        if not isinstance(event.get("Test"), str):
            if isinstance(event.get("Output"), str):
                other.append(event["Output"])
            continue
        name = event["Test"].split("/", 1)[0]
        action = event.get("Action")
        if action == "output" and isinstance(event.get("Output"), str):
            outputs.setdefault(name, []).append(event["Output"])
        elif action in ("pass", "fail", "skip") and "/" not in event["Test"]:
            outcome = {"pass": TestOutcome.PASSED, "fail": TestOutcome.FAILED}.get(
                action, TestOutcome.SKIPPED
            )
            reported.append(Reported(name, outcome, "".join(outputs.get(name, []))))
    return reported, "".join(other)


def _go_refused(files: Mapping[str, str]) -> str | None:
    for path, text in sorted(files.items()):
        if path.endswith(".go") and _GO_EMBED.search(text):
            return f"{path}: go:embed is not allowed (it would read the tests' files)"
    return None


LANGUAGES: dict[str, Language] = {
    "go": Language("go", _go_tests, _go_disguise, _go_steps, _go_parse, _go_refused),
}


def count_tests(task: WorkspaceTask) -> int:
    """How many tests `task`'s test files declare (read from their text alone)."""
    if task.language == "python":
        return len(expected_tests(task.test_sources))
    language = LANGUAGES.get(task.language)
    return len(language.tests(task.test_sources)) if language else 0


def _environment(toolchain: Toolchain) -> dict[str, str]:
    programs = ":".join([*(str(p) for p in toolchain.path), "/usr/bin", "/bin"])
    return {
        "PATH": programs,
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "GOCACHE": "/tmp/go-cache",
        "GOPATH": "/tmp/go",
        "GOPROXY": "off",
        "GOFLAGS": "",
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
        # Two, whatever the machine: one exercise (paasio) requires them, and every
        # thread counts against the sandbox's process limit.
        "GOMAXPROCS": "2",
        **toolchain.env,
    }


def _unmasked(text: str, names: Mapping[str, str]) -> str:
    """`text` with each run name put back as the test's own name."""
    for run_name, test in names.items():
        text = text.replace(run_name, test.rsplit("::", 1)[1])
    return text


def _build_error(record: Mapping[str, object], names: Mapping[str, str]) -> Verdict:
    output = _unmasked(str(record.get("output", "")), names).strip()
    message = f"The build failed:\n{output}" if output else "The build failed."
    feedback = trimmed(message, "")
    return Verdict(Outcome.SYNTAX_ERROR, gate=None, detail=feedback, feedback=feedback)


def _undisguised(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    """The test files as they are, with no sentinel: a naive runner's."""
    return Disguised(dict(tests), {name: f"{path}::{name}" for path, name in declared}, "")


def judge_native(
    files: Mapping[str, str],
    task: WorkspaceTask,
    sandbox: Sandbox,
    limits: Limits,
    *,
    guarded: bool = True,
) -> Verdict:
    """The verdict on the files a candidate leaves in a workspace of `task.language`
    (see the module's docstring): built and tested in `sandbox` under `limits`, with
    processes allowed. `guarded=False` runs as a naive runner would, the tests
    neither renamed nor joined by a sentinel: only for the tests that show what the
    defences stop."""
    language = LANGUAGES[task.language]
    editable = {path: text for path, text in files.items() if path in task.editable}
    workspace = dict(task.files) | editable
    if (refusal := language.refused(workspace)) is not None:
        return Verdict(Outcome.REJECTED, gate=None, detail=refusal, feedback=refusal)
    tests = task.test_sources
    declared = language.tests(tests)
    disguised = (language.disguise if guarded else _undisguised)(tests, declared)
    nonce, token = secrets.token_hex(16), _tag()
    native = {
        "steps": language.steps(tests, disguised, token),
        "env": _environment(find_toolchain(task.language)),
        "cap": OUTPUT_CAP,
    }
    written = workspace | dict(task.support) | disguised.files
    running = limits.model_copy(update={"allow_processes": True})
    with sandbox.test_run(written, {}, nonce, running, native=native) as run:
        records, problems = signed(run, nonce)
    steps = {str(record.get("step")): record for record in records}
    build = steps.get(BUILD)
    if run.stop is None and build is not None and build.get("exit") != 0 and not problems:
        return _build_error(build, disguised.names)
    reported = language.parse(str(steps.get(TEST, {}).get("output", "")))
    return _decided(run, reported, disguised, list(problems))


def _decided(
    run: TestRun, report: tuple[list[Reported], str], disguised: Disguised, problems: list[str]
) -> Verdict:
    """The verdict from what the test step reported: every test's result once, the
    sentinel failed, or else no pass."""
    reported, other = report
    names, results, failures, tampering = disguised.names, [], [], []
    for entry in reported:
        if entry.name == disguised.sentinel:
            if entry.outcome is not TestOutcome.FAILED:
                tampering.append(f"a test planted to fail reported {entry.outcome.value}")
            continue
        if entry.name not in names:
            problems.append(f"a result for a test the run does not have: {entry.name}")
            continue
        test = names[entry.name]
        results.append(TestResult(name=test, visibility=Visibility.VISIBLE, outcome=entry.outcome))
        if entry.outcome is not TestOutcome.PASSED:
            failures.append(f"FAILED {test}\n{_unmasked(entry.output, names)}")
    counted = Counter(entry.name for entry in reported)
    missing = len(set(names) - set(counted))
    planted = not disguised.sentinel or disguised.sentinel in counted
    if missing or any(counted[name] > 1 for name in names) or not planted:
        problems.append(f"{len(results)} results for {len(names)} tests ({missing} missing)")
    passed = sum(r.outcome is TestOutcome.PASSED for r in results)
    tail = "\n".join([*problems, f"{passed} passed, {len(names) - passed} failed"])
    outcome, detail = stopped_or_tampered(run, tampering, tail) or (Outcome.ERROR, "")
    if outcome is Outcome.ERROR and not detail:
        if not problems and results and passed == len(results):
            outcome = Outcome.PASSED
        elif any(r.outcome is TestOutcome.FAILED for r in results):
            outcome = Outcome.FAILED
    if not failures and other.strip():
        failures.append(_unmasked(other.strip(), names))
    feedback = None
    # A forged run gets no feedback: what it could say would teach how it was caught.
    if outcome not in (Outcome.PASSED, Outcome.TAMPERED):
        feedback = trimmed("\n".join([detail, *failures]).strip(), tail)
    return Verdict(
        outcome,
        gate=None,
        tests=tuple(results),
        visible_output="\n".join([*failures, tail]),
        detail=detail,
        feedback=feedback,
        usage=usage_of(run.exits),
    )
