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
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from codetrial.config import Limits
from codetrial.records import Outcome, TestOutcome, TestResult, Verdict, Visibility
from codetrial.sandbox import Sandbox, TestRun
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict.decide import stopped_or_tampered, usage_of
from codetrial.verdict.toolchains import Toolchain, find_toolchain
from codetrial.verdict.workspace import expected_tests, signed, trimmed

OUTPUT_CAP = 1 << 20
# Of each failing test's output, what the feedback keeps: one long message (an
# assertion that prints a whole game's state) leaves room for the next tests'.
FAILURE_CHARS = 1000
# Each process's address space (its rlimit): runtimes reserve far more than they use (V8
# reserves a code range per worker thread): a terabyte, and the sandbox's cgroup, which the run's
# memory limit sets, is what bounds the memory they use.
ADDRESS_SPACE_MB = 1 << 20
# Where the sandbox's runner writes a workspace: left out of what the model is shown.
_WORKSPACE = "/scratch/workspace/"
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
    """The test files as a run builds them (with what else the run adds), the tests'
    run names (-> file::name), the sentinel's run name, which must fail, and how to
    put back in a runner's output what the run renamed (run text -> the file's)."""

    files: dict[str, str]
    names: dict[str, str]
    sentinel: str
    masks: dict[str, str]


@dataclass(frozen=True)
class Planned:
    """What a run's steps are made from: the workspace's paths as the candidate left
    them, the test files as disguised for the run, the run's secret token (which names
    what it writes) and the toolchain."""

    paths: tuple[str, ...]
    disguised: Disguised
    token: str
    toolchain: Toolchain


@dataclass(frozen=True)
class Language:
    """What judging a language takes: `tests` (the test names the test files declare,
    as file::name), `disguise` (the test files renamed for a run, with a sentinel),
    `steps` (the build then the test steps of a run as planned), `parse`
    (the test step's record -> what it reports of each test, and what it printed
    that belongs to no test) and `refused` (why a candidate's
    files may not be built, when they may not)."""

    name: str
    tests: Callable[[Mapping[str, str]], list[tuple[str, str]]]
    disguise: Callable[[Mapping[str, str], list[tuple[str, str]]], Disguised]
    steps: Callable[[Planned], list[dict[str, object]]]
    parse: Callable[[Mapping[str, Any]], tuple[list[Reported], str]]
    refused: Callable[[Mapping[str, str]], str | None]


def _tag() -> str:
    return secrets.token_hex(_TAG_BYTES)


def _copied(declared: list[tuple[str, str]], default: str) -> str:
    """The name a sentinel copies: one of the declared tests', drawn afresh."""
    return secrets.choice([name for _, name in declared]) if declared else default


def _refusing(
    suffix: str, pattern: re.Pattern[str], why: str
) -> Callable[[Mapping[str, str]], str | None]:
    """A `Language.refused` that refuses the first file ending in `suffix` in which
    `pattern` is found, saying `why`."""

    def refused(files: Mapping[str, str]) -> str | None:
        for path, text in sorted(files.items()):
            if path.endswith(suffix) and pattern.search(text):
                return f"{path}: {why}"
        return None

    return refused


def _xml_report(record: Mapping[str, Any]) -> ElementTree.Element | None:
    """The test step's XML report, None when it wrote none that parses."""
    try:
        return ElementTree.fromstring(str(record.get("report", "")))
    except ElementTree.ParseError:
        return None


# --- Go: `go test -c` builds the tests, `go tool test2json` runs them (go test -json) ---

_GO_TEST = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)
_GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.MULTILINE)
_GO_EMBED = re.compile(r"//go:embed|\"embed\"")


_GO_BUILD = re.compile(r"^//go:build (.+)$", re.MULTILINE)
_GO_TOKENS = re.compile(r"\s*(\|\||&&|!|\(|\)|[\w.]+)")
# The build constraints a run satisfies: no tags are set.
_GO_SATISFIED = frozenset({"linux", "amd64", "unix", "gc"})


def _go_built(source: str) -> bool:
    """Whether `go test` builds a file with no tags set: its `//go:build` line, if it
    has one, holds (an expression of ||, &&, ! and parentheses over tags)."""
    found = _GO_BUILD.search(source)
    if found is None:
        return True
    tokens = _GO_TOKENS.findall(found[1])

    def either() -> bool:
        value = both()
        while tokens and tokens[0] == "||":
            tokens.pop(0)
            value = both() or value
        return value

    def both() -> bool:
        value = single()
        while tokens and tokens[0] == "&&":
            tokens.pop(0)
            value = single() and value
        return value

    def single() -> bool:
        token = tokens.pop(0) if tokens else ""
        if token == "!":
            return not single()
        if token == "(":
            value = either()
            if tokens:
                tokens.pop(0)
            return value
        return token in _GO_SATISFIED or token.startswith("go1.")

    return either()


def _go_tests(tests: Mapping[str, str]) -> list[tuple[str, str]]:
    return [
        (path, name)
        for path, source in tests.items()
        if _go_built(source)
        for name in _GO_TEST.findall(source)
    ]


def _go_disguise(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    names: dict[str, str] = {}
    files: dict[str, str] = {}
    masks: dict[str, str] = {}
    for path, source in tests.items():
        if not _go_built(source):
            files[path] = source
            continue
        renamed: dict[str, str] = {}

        def rename(match: re.Match[str], renamed: dict[str, str] = renamed) -> str:
            run_name = f"{match.group(1)}_{_tag()}"
            renamed[match.group(1)] = run_name
            return match.group(0).replace(match.group(1), run_name, 1)

        files[path] = _GO_TEST.sub(rename, source)
        names |= {run_name: f"{path}::{name}" for name, run_name in renamed.items()}
        masks |= {run_name: name for name, run_name in renamed.items()}
    copied = _copied(declared, "Test")
    sentinel = f"{copied}_{_tag()}"
    package = _GO_PACKAGE.search(next(iter(tests.values()), ""))
    files[f"{_tag()}_test.go"] = (
        f'package {package.group(1) if package else "main"}\n\nimport "testing"\n\n'
        f'func {sentinel}(t *testing.T) {{\n\tt.Fatal("expected failure")\n}}\n'
    )
    return Disguised(files, names, sentinel, masks)


def _go_steps(run: Planned) -> list[dict[str, object]]:
    binary = f"/tmp/{run.token}.test"
    return [
        {
            "name": BUILD,
            "argv": ["go", "test", "-c", "-vet=off", "-o", binary, "."],
            "stop": True,
            "remove": sorted(run.disguised.files),
        },
        {
            "name": TEST,
            "argv": ["go", "tool", "test2json", "-t", binary, "-test.v", "-test.run", "^Test"],
        },
    ]


def _go_parse(record: Mapping[str, Any]) -> tuple[list[Reported], str]:
    """test2json's events: each top-level test's pass, fail or skip, with the output
    of it and its subtests."""
    output = str(record.get("output", ""))
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


_go_refused = _refusing(
    ".go", _GO_EMBED, "go:embed is not allowed (it would read the tests' files)"
)


# --- JavaScript: Jest with Babel, in band, its report written with --json ---

_JS_TEST = re.compile(r"""\b(test|it)\(\s*(['"`])((?:\\.|(?!\2)[^\\])*)\2""")
_ESCAPES = {"n": "\n", "t": "\t"}
_TRANSFORM = ".codetrial-transform.js"
# Jest's transformer of every file, Babel's, that removes each test file once it has
# read it: the candidate's code, which the test file imports, runs after that.
_JS_TRANSFORMER = """const fs = require("fs");
const babelJest = require("babel-jest");
const base = (babelJest.default || babelJest).createTransformer();
module.exports = {
  process(source, filename, options) {
    const transformed = base.process(source, filename, options);
    if (filename.endsWith(".spec.js")) fs.unlinkSync(filename);
    return transformed;
  },
};
"""


def _js_title(match: re.Match[str]) -> str:
    """A test's title as Jest reports it: the string literal's text, unescaped."""
    return re.sub(r"\\(.)", lambda escape: _ESCAPES.get(escape[1], escape[1]), match[3])


def _js_tests(tests: Mapping[str, str]) -> list[tuple[str, str]]:
    return [
        (path, _js_title(match))
        for path, source in tests.items()
        for match in _JS_TEST.finditer(source)
    ]


def _js_disguise(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    names: dict[str, str] = {}
    files: dict[str, str] = {}
    masks: dict[str, str] = {}
    for path, source in tests.items():

        def tag(match: re.Match[str], path: str = path) -> str:
            added = _tag()
            names[f"{added} {_js_title(match)}"] = f"{path}::{_js_title(match)}"
            masks[f"{added} "] = ""
            return f"{match[1]}({match[2]}{added} {match[3]}{match[2]}"

        files[path] = _JS_TEST.sub(tag, source)
    copied = _copied(declared, "works")
    sentinel = f"{_tag()} {copied}"
    first = next(iter(files), "")
    files[first] += f"\ntest({json.dumps(sentinel)}, () => {{\n  expect(0).toEqual(1);\n}});\n"
    return Disguised(files | {_TRANSFORM: _JS_TRANSFORMER}, names, sentinel, masks)


def _js_steps(run: Planned) -> list[dict[str, object]]:
    report = f"/tmp/{run.token}.json"
    config: dict[str, object] = {"testTimeout": 30000}
    if _TRANSFORM in run.disguised.files:
        config["transform"] = {"\\.[jt]sx?$": f"<rootDir>/{_TRANSFORM}"}
    jest = ["node", "node_modules/jest/bin/jest.js", "--ci", "--runInBand", "--silent"]
    options = ["--json", "--outputFile", report, "--no-cache", "--config", json.dumps(config)]
    specs = sorted(path for path in run.disguised.files if path.endswith(".spec.js"))
    return [{"name": TEST, "argv": [*jest, *options, *specs], "report": report}]


def _js_message(messages: object) -> str:
    """Jest's failure messages without the stack frames of Jest's own machinery."""
    lines = "\n".join(str(m) for m in messages) if isinstance(messages, list) else ""
    return "\n".join(line for line in lines.splitlines() if "node_modules/" not in line) + "\n"


def _js_parse(record: Mapping[str, Any]) -> tuple[list[Reported], str]:
    """Jest's --json report: each assertion's status, its failure messages, and the
    messages of test files that failed to run."""
    try:
        report = json.loads(str(record.get("report", "")))
    except ValueError:
        return [], str(record.get("output", ""))
    reported: list[Reported] = []
    other: list[str] = []
    outcomes = {"passed": TestOutcome.PASSED, "failed": TestOutcome.FAILED}
    for suite in report.get("testResults", []) if isinstance(report, dict) else []:
        if not isinstance(suite, dict):
            continue
        if suite.get("message") and not suite.get("assertionResults"):
            other.append(str(suite["message"]))
        for result in suite.get("assertionResults", []):
            # Tests the file marks to skip (test.skip) are not the run's: none is counted.
            if isinstance(result, dict) and isinstance(result.get("title"), str):
                outcome = outcomes.get(str(result.get("status")))
                if outcome is None:
                    continue
                message = _js_message(result.get("failureMessages"))
                reported.append(Reported(result["title"], outcome, message))
    return reported, "\n".join(other)


def _refuses_nothing(files: Mapping[str, str]) -> str | None:
    return None


# --- Rust: cargo builds the tests offline from Debian's crates, libtest runs them ---

_RUST_TEST = re.compile(r"(#\[test\]\s*(?:#\[[^\]]*\]\s*|///[^\n]*\n\s*)*fn\s+)(\w+)(\s*\()")
_RUST_INCLUDE = re.compile(r"\binclude(_str|_bytes)?!")
_RUST_RESULT = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", re.MULTILINE)
_RUST_FAILURE = re.compile(r"^---- (\S+) stdout ----\n(.*?)(?=^---- |^failures:$|\Z)", re.M | re.S)
# Cargo reads crates from Debian's registry (the librust-*-dev packages), never the network.
_CARGO_CONFIG = """[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"

[net]
offline = true
"""


_RUST_GATED_MODULE = re.compile(r"#\[cfg\(feature[^\]]*\]\s*(?:pub\s+)?mod\s+\w+\s*\{")


def _rust_built(source: str, match: re.Match[str]) -> bool:
    """Whether the test `match` found is compiled with no feature enabled: no
    `cfg(feature = ...)` among its attributes, nor on a module around it."""
    if "cfg(feature" in match[0]:
        return False
    for line in reversed(source[: match.start()].splitlines()):
        if not line.strip().startswith(("#[", "///")):
            break
        if "cfg(feature" in line:
            return False
    for gated in _RUST_GATED_MODULE.finditer(source):
        depth, end = 0, len(source)
        for index in range(gated.end() - 1, len(source)):
            depth += {"{": 1, "}": -1}.get(source[index], 0)
            if depth == 0:
                end = index
                break
        if gated.start() < match.start() < end:
            return False
    return True


def _rust_tests(tests: Mapping[str, str]) -> list[tuple[str, str]]:
    return [
        (path, m[2])
        for path, source in tests.items()
        for m in _RUST_TEST.finditer(source)
        if _rust_built(source, m)
    ]


def _rust_disguise(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    """Each test file under a name of the run's own (a test target cargo finds by it),
    each test function renamed, a sentinel in the first."""
    names: dict[str, str] = {}
    files: dict[str, str] = {}
    masks: dict[str, str] = {}
    for path, source in tests.items():

        def rename(match: re.Match[str], path: str = path, source: str = source) -> str:
            run_name = f"{match[2]}_{_tag()}"
            if _rust_built(source, match):
                names[run_name] = f"{path}::{match[2]}"
            masks[run_name] = match[2]
            return f"{match[1]}{run_name}{match[3]}"

        placed = f"tests/t{_tag()}.rs"
        files[placed] = _RUST_TEST.sub(rename, source)
        masks[placed] = path
    copied = _copied(declared, "test")
    sentinel = f"{copied}_{_tag()}"
    first = next(iter(files), "tests/t.rs")
    files[first] = files.get(first, "") + (
        f'\n#[test]\nfn {sentinel}() {{\n    panic!("expected failure");\n}}\n'
    )
    return Disguised(files | {".cargo/config.toml": _CARGO_CONFIG}, names, sentinel, masks)


def _rust_steps(run: Planned) -> list[dict[str, object]]:
    tests = [path for path in run.disguised.files if path.startswith("tests/")]
    targets = [Path(path).stem for path in tests]
    build = ["cargo", "test", "--offline", "--no-run", *(f"--test={t}" for t in targets)]
    removed = sorted(tests)
    env = {"CARGO_TARGET_DIR": f"/tmp/{run.token}"}
    steps: list[dict[str, object]] = [
        {"name": BUILD, "argv": build, "stop": True, "remove": removed, "env": env}
    ]
    for target in targets:
        # A test binary is named after its target, then a hash of 16 hexadecimal digits.
        binary = f"/tmp/{run.token}/debug/deps/{target}-" + "?" * 16
        argv = [binary, "--include-ignored"]
        steps.append({"name": TEST, "argv": argv, "expand": True, "env": env})
    return steps


def _rust_parse(record: Mapping[str, Any]) -> tuple[list[Reported], str]:
    """libtest's lines, `test NAME ... ok|FAILED|ignored`, and each failure's
    captured output."""
    output = str(record.get("output", ""))
    captured = {match[1]: match[2] for match in _RUST_FAILURE.finditer(output)}
    outcomes = {"ok": TestOutcome.PASSED, "FAILED": TestOutcome.FAILED}
    reported = [
        Reported(
            name.rsplit("::", 1)[-1],
            outcomes.get(status, TestOutcome.SKIPPED),
            captured.get(name, ""),
        )
        for name, status in _RUST_RESULT.findall(output)
    ]
    return reported, "" if reported else output


_rust_refused = _refusing(
    ".rs", _RUST_INCLUDE, "include!, include_str! and include_bytes! are not allowed"
)


# --- C++: g++ builds the tests against Catch2's main, built once; a JUnit report ---

_CPP_TEST = re.compile(r'\b(TEST_CASE|SCENARIO)\((\s*(?://[^\n]*\n\s*)*)"((?:\\.|[^"\\])*)"')
_CPP_CONDITION = re.compile(r"^\s*#\s*(if|ifdef|ifndef|else|endif)\b(.*)$")
_CPP_FLAGS = ["-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
# The exercises' own CMake build, as Exercism's test image runs it: Catch2 from the
# system, every test compiled in.
_CPP_DEFINES = ["-DEXERCISM_TEST_SUITE", "-DEXERCISM_RUN_ALL_TESTS"]


def _cpp_compiled(source: str) -> list[tuple[int, int]]:
    """The spans of `source` the preprocessor keeps with the build's defines: a
    condition on a macro is read as `defined(MACRO)`; any other condition holds."""
    defined = {define.removeprefix("-D") for define in _CPP_DEFINES}
    spans: list[tuple[int, int]] = []
    stack: list[bool] = []
    offset = start = 0
    for line in source.splitlines(keepends=True):
        directive = _CPP_CONDITION.match(line)
        if directive is not None:
            if all(stack):
                spans.append((start, offset))
            keyword, rest = directive[1], directive[2]
            macro = re.search(r"\w+", rest.replace("defined", ""))
            holds = macro is None or macro[0] in defined
            if keyword == "ifndef" or "!" in rest:
                holds = not holds
            if keyword in ("if", "ifdef", "ifndef"):
                stack.append(holds if keyword != "if" or macro is not None else True)
            elif keyword == "else" and stack:
                stack[-1] = not stack[-1]
            elif keyword == "endif" and stack:
                stack.pop()
            start = offset + len(line)
        offset += len(line)
    if all(stack):
        spans.append((start, offset))
    return spans


def _cpp_tests(tests: Mapping[str, str]) -> list[tuple[str, str]]:
    found = []
    for path, source in tests.items():
        spans = _cpp_compiled(source)
        for match in _CPP_TEST.finditer(source):
            if any(low <= match.start() < high for low, high in spans):
                found.append((path, match[3]))
    return found


def _cpp_disguise(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    """Each test file under a name of the run's own, each test case's name tagged, a
    sentinel in the first."""
    names: dict[str, str] = {}
    files: dict[str, str] = {}
    masks: dict[str, str] = {}
    for path, source in tests.items():
        spans = _cpp_compiled(source)

        def tag(
            match: re.Match[str], path: str = path, spans: list[tuple[int, int]] = spans
        ) -> str:
            added = _tag()
            if any(low <= match.start() < high for low, high in spans):
                names[f"{added} {match[3]}"] = f"{path}::{match[3]}"
            masks[f"{added} "] = ""
            return f'{match[1]}({match[2]}"{added} {match[3]}"'

        placed = f"t{_tag()}.cpp"
        files[placed] = _CPP_TEST.sub(tag, source)
        masks[placed] = path
    copied = _copied(declared, "test")
    sentinel = f"{_tag()} {copied}"
    first = next(iter(files), "t.cpp")
    files[first] = files.get(first, "") + f'\nTEST_CASE("{sentinel}") {{\n    REQUIRE(false);\n}}\n'
    return Disguised(files, names, sentinel, masks)


def _cpp_steps(run: Planned) -> list[dict[str, object]]:
    binary, report = f"/tmp/{run.token}-tests", f"/tmp/{run.token}-report.xml"
    tests = sorted(run.disguised.files)
    sources = [path for path in run.paths if path.endswith(".cpp")]
    compiler = ["g++", *_CPP_FLAGS, *_CPP_DEFINES, "-I.", "-o", binary]
    build = [*compiler, *tests, *sources, *run.toolchain.libraries]
    return [
        {"name": BUILD, "argv": build, "stop": True, "remove": tests},
        {"name": TEST, "argv": [binary, "-r", "xml", "-o", report], "report": report},
    ]


def _cpp_failure(case: ElementTree.Element) -> str:
    """What failed in a Catch2 test case: each failed expression as written and as
    expanded, each exception and fatal condition, with its line."""
    lines: list[str] = []
    for element in case.iter():
        where = f"{element.get('filename', '')}:{element.get('line', '')}"
        if element.tag == "Expression" and element.get("success") == "false":
            original = (element.findtext("Original") or "").strip()
            expanded = (element.findtext("Expanded") or "").strip()
            lines.append(f"{where}: {element.get('type', '')}( {original} ) with {expanded}")
        elif element.tag in ("Exception", "FatalErrorCondition"):
            lines.append(f"{where}: {element.tag}: {(element.text or '').strip()}")
    return "\n".join(lines) + "\n"


def _cpp_parse(record: Mapping[str, Any]) -> tuple[list[Reported], str]:
    """Catch2's XML report: each test case's overall result and what failed in it."""
    root = _xml_report(record)
    if root is None:
        return [], str(record.get("output", ""))
    reported = []
    for case in root.iter("TestCase"):
        overall = case.find("OverallResult")
        passed = overall is not None and overall.get("success") == "true"
        outcome = TestOutcome.PASSED if passed else TestOutcome.FAILED
        reported.append(Reported(case.get("name", ""), outcome, _cpp_failure(case)))
    return reported, "" if reported else str(record.get("output", ""))


# --- Java: javac, then JUnit's console launcher, its XML report; no Gradle ---

_JAVA_TEST = re.compile(
    r"(@(?:Test|ParameterizedTest)\b[^;{]*?(?:public\s+|protected\s+)?void\s+)(\w+)(\s*\()"
)


def _java_tests(tests: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(path, m[2]) for path, source in tests.items() for m in _JAVA_TEST.finditer(source)]


def _java_disguise(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    """Each test method renamed, a sentinel method in the first test class."""
    names: dict[str, str] = {}
    files: dict[str, str] = {}
    masks: dict[str, str] = {}
    for path, source in tests.items():

        def rename(match: re.Match[str], path: str = path) -> str:
            run_name = f"{match[2]}_{_tag()}"
            names[run_name] = f"{path}::{match[2]}"
            masks[run_name] = match[2]
            return f"{match[1]}{run_name}{match[3]}"

        files[path] = _JAVA_TEST.sub(rename, source)
    copied = _copied(declared, "test")
    sentinel = f"{copied}_{_tag()}"
    first = next(iter(files), "")
    body, brace, _ = files.get(first, "").rpartition("}")
    planted = f"    @org.junit.jupiter.api.Test\n    public void {sentinel}() {{\n"
    planted += '        org.junit.jupiter.api.Assertions.fail("expected failure");\n    }\n'
    files[first] = f"{body}{planted}{brace}\n"
    return Disguised(files, names, sentinel, masks)


def _java_steps(run: Planned) -> list[dict[str, object]]:
    classes, reports = f"/tmp/{run.token}/classes", f"/tmp/{run.token}/reports"
    tests = sorted(run.disguised.files)
    sources = [path for path in run.paths if path.endswith(".java")]
    libraries = ":".join(run.toolchain.libraries)
    build = ["javac", "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", libraries]
    launcher = ["java", "-jar", run.toolchain.env["JUNIT_CONSOLE"], "--disable-banner"]
    options = ["--class-path", f"{classes}:{libraries}", "--scan-class-path"]
    return [
        {"name": BUILD, "argv": [*build, *tests, *sources], "stop": True, "remove": tests},
        {
            "name": TEST,
            "argv": [*launcher, *options, "--reports-dir", reports, "--details=none"],
            "report": f"{reports}/TEST-junit-jupiter.xml",
        },
    ]


def _java_parse(record: Mapping[str, Any]) -> tuple[list[Reported], str]:
    """The launcher's JUnit XML report: each test method's result (a parameterized
    one's cases together), with its failures' messages."""
    root = _xml_report(record)
    if root is None:
        return [], str(record.get("output", ""))
    outcomes: dict[str, TestOutcome] = {}
    texts: dict[str, list[str]] = {}
    for case in root.iter("testcase"):
        method = case.get("name", "").split("(", 1)[0]
        failed = [*case.iter("failure"), *case.iter("error")]
        skipped = case.find("skipped") is not None
        outcome = (
            TestOutcome.FAILED if failed else TestOutcome.SKIPPED if skipped else TestOutcome.PASSED
        )
        if outcomes.get(method) is not TestOutcome.FAILED:
            outcomes[method] = outcome
        texts.setdefault(method, []).extend(
            f"{f.get('type', '')}: {f.get('message', '')}".strip() for f in failed
        )
    reported = [
        Reported(method, outcome, "\n".join(texts[method]) + "\n")
        for method, outcome in outcomes.items()
    ]
    return reported, "" if reported else str(record.get("output", ""))


LANGUAGES: dict[str, Language] = {
    "go": Language("go", _go_tests, _go_disguise, _go_steps, _go_parse, _go_refused),
    "javascript": Language(
        "javascript", _js_tests, _js_disguise, _js_steps, _js_parse, _refuses_nothing
    ),
    "rust": Language("rust", _rust_tests, _rust_disguise, _rust_steps, _rust_parse, _rust_refused),
    "cpp": Language("cpp", _cpp_tests, _cpp_disguise, _cpp_steps, _cpp_parse, _refuses_nothing),
    "java": Language(
        "java", _java_tests, _java_disguise, _java_steps, _java_parse, _refuses_nothing
    ),
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


def _unmasked(text: str, masks: Mapping[str, str]) -> str:
    """`text` with what the run renamed put back as the test files have it."""
    for run_text, original in masks.items():
        text = text.replace(run_text, original)
    return text


def _build_error(record: Mapping[str, object], masks: Mapping[str, str]) -> Verdict:
    output = _unmasked(str(record.get("output", "")), masks).replace(_WORKSPACE, "").strip()
    message = f"The build failed:\n{output}" if output else "The build failed."
    feedback = trimmed(message, "")
    return Verdict(Outcome.SYNTAX_ERROR, gate=None, detail=feedback, feedback=feedback)


def _undisguised(tests: Mapping[str, str], declared: list[tuple[str, str]]) -> Disguised:
    """The test files as they are, with no sentinel: a naive runner's."""
    names = {name: f"{path}::{name}" for path, name in declared}
    return Disguised(dict(tests), names, "", {})


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
    # The model's files, and those a reference adds (Java's helper classes): no other
    # file, which a build could run (a build script, a Babel configuration), is taken.
    allowed = {*task.editable, *dict(task.reference)}
    editable = {path: text for path, text in files.items() if path in allowed}
    workspace = dict(task.files) | editable
    if (refusal := language.refused(workspace)) is not None:
        return Verdict(Outcome.REJECTED, gate=None, detail=refusal, feedback=refusal)
    tests = task.test_sources
    declared = language.tests(tests)
    disguised = (language.disguise if guarded else _undisguised)(tests, declared)
    nonce, token = secrets.token_hex(16), _tag()
    toolchain = find_toolchain(task.language)
    native = {
        "steps": language.steps(Planned(tuple(sorted(workspace)), disguised, token, toolchain)),
        "env": _environment(toolchain),
        "links": toolchain.links,
        "cap": OUTPUT_CAP,
    }
    written = workspace | dict(task.support) | disguised.files
    address_space = max(limits.memory_mb, ADDRESS_SPACE_MB)
    running = limits.model_copy(update={"allow_processes": True, "memory_mb": address_space})
    with sandbox.test_run(written, {}, nonce, running, native=native) as run:
        records, problems = signed(run, nonce)
    build = next((record for record in records if record.get("step") == BUILD), None)
    if run.stop is None and build is not None and build.get("exit") != 0 and not problems:
        return _build_error(build, disguised.masks)
    parsed = [language.parse(record) for record in records if record.get("step") == TEST]
    reported = [entry for entries, _ in parsed for entry in entries]
    other = "\n".join(text for _, text in parsed if text)
    return _decided(run, (reported, other), disguised, list(problems))


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
            output = _unmasked(entry.output, disguised.masks)
            if len(output) > FAILURE_CHARS:
                output = output[:FAILURE_CHARS] + "...\n"
            failures.append(f"FAILED {test}\n{output}")
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
        failures.append(_unmasked(other.strip(), disguised.masks))
    feedback = None
    # A forged run gets no feedback: what it could say would teach how it was caught.
    if outcome not in (Outcome.PASSED, Outcome.TAMPERED):
        shown = "\n".join([detail, *failures]).replace(_WORKSPACE, "")
        feedback = trimmed(shown.strip(), tail)
    return Verdict(
        outcome,
        gate=None,
        tests=tuple(results),
        visible_output="\n".join([*failures, tail]),
        detail=detail,
        feedback=feedback,
        usage=usage_of(run.exits),
    )
