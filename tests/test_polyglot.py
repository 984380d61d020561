"""The aider polyglot benchmark in all its languages: every exercise loads, and each
language with a runner builds and tests references (which pass) and stubs (which
fail) in the real sandbox, with its toolchain bound read-only. Each language's
forgeries are first shown to pass under a naive runner (the tests under their own
names, no sentinel), then judged by codetrial's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.errors import ConfigError
from codetrial.kinds import KINDS
from codetrial.records import Outcome, TestOutcome, Verdict
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.tasks import load_suite
from codetrial.tasks.workspace import WorkspaceTask
from codetrial.verdict.polyglot import judge_native
from codetrial.verdict.pool import JudgePool
from codetrial.verdict.toolchains import BUILD_PROCESSES, building, find_toolchain
from tests.conftest import POLYGLOT, cli

BENCHMARK = POLYGLOT.parent / "polyglot-benchmark"
LIMITS = Limits(timeout_s=60, cpu_s=60)


@pytest.fixture(scope="module")
def polyglot() -> dict[str, WorkspaceTask]:
    return {task.id: task for task in load_suite("polyglot", data=BENCHMARK)}


def _building(language: str) -> Callable[[], Iterator[Sandbox]]:
    """A module's sandbox that builds and tests `language`."""

    def sandbox() -> Iterator[Sandbox]:
        box = open_sandbox(building(SandboxPolicy(LIMITS), [find_toolchain(language)]))
        yield box
        box.close()

    return pytest.fixture(scope="module", name=f"{language}_sandbox")(sandbox)


def _forgery_stopped(
    files: dict[str, str], task: WorkspaceTask, box: Sandbox, outcome: Outcome
) -> None:
    """A forgery that passes a naive runner ends as `outcome` here."""
    naive = judge_native(files, task, box, LIMITS, guarded=False)
    assert naive.outcome is Outcome.PASSED, naive.feedback
    guarded = judge_native(files, task, box, LIMITS)
    assert guarded.outcome is outcome, guarded.detail


def _reference_then_stub(task: WorkspaceTask, box: Sandbox) -> tuple[Verdict, Verdict]:
    """The verdicts on the task's reference, which passes every test, and on its
    given files."""
    passed = judge_native(dict(task.files) | dict(task.reference), task, box, LIMITS)
    assert passed.outcome is Outcome.PASSED, passed.feedback
    assert passed.tests and all(t.outcome is TestOutcome.PASSED for t in passed.tests)
    return passed, judge_native(dict(task.files), task, box, LIMITS)


go_sandbox = _building("go")


def test_every_exercise_of_every_language_loads(polyglot: dict[str, WorkspaceTask]) -> None:
    languages = Counter(task.language for task in polyglot.values())
    expected = {"cpp": 26, "go": 39, "java": 47, "javascript": 49, "python": 34, "rust": 30}
    assert languages == expected
    assert len(load_suite("polyglot-go", data=BENCHMARK)) == 39


def test_python_exercises_load_as_polyglot_python_loads_them(
    polyglot: dict[str, WorkspaceTask],
) -> None:
    for task in load_suite("polyglot-python", data=BENCHMARK):
        assert isinstance(task, WorkspaceTask)
        same = polyglot[f"python/{task.id}"]
        assert (same.files, same.tests, same.reference, same.trust, same.digest) == (
            task.files,
            task.tests,
            task.reference,
            task.trust,
            task.digest,
        )


def test_build_files_are_never_the_models_and_tests_run_as_aider_runs_them(
    polyglot: dict[str, WorkspaceTask],
) -> None:
    gigasecond = polyglot["rust/gigasecond"]
    assert gigasecond.editable == ("src/lib.rs",)
    assert "Cargo.toml" in dict(gigasecond.support)
    assert dict(gigasecond.reference).keys() == {"src/lib.rs"}
    meetup = polyglot["cpp/meetup"]
    assert {"CMakeLists.txt", "test/catch.hpp"} <= dict(meetup.support).keys()
    assert dict(meetup.reference).keys() == {"meetup.h"}
    bowling = polyglot["javascript/bowling"]
    assert "xtest(" not in bowling.tests[0].source
    assert "package.json" in dict(bowling.support) and bowling.editable == ("bowling.js",)
    poker = polyglot["java/poker"]
    assert "@Disabled" not in poker.tests[0].source
    assert "src/main/java/Hand.java" in dict(poker.reference)
    # Test files the config does not list but Go's runner finds by their names.
    robot = polyglot["go/robot-simulator"]
    assert "robot_simulator_step3_test.go" in {test.name for test in robot.tests}
    assert all(
        task.trust == "in-sandbox" for task in polyglot.values() if task.language != "python"
    )


def test_a_language_without_a_runner_says_so() -> None:
    with pytest.raises(ConfigError, match="cannot be judged yet"):
        find_toolchain("cobol")


# paasio is not among them: its TestMultiThreaded needs two processors, and a test worker
# keeps to one.
@pytest.mark.parametrize("exercise", ["bowling", "robot-simulator", "two-bucket", "react"])
def test_go_references_pass_and_stubs_fail(
    exercise: str, polyglot: dict[str, WorkspaceTask], go_sandbox: Sandbox
) -> None:
    task = polyglot[f"go/{exercise}"]
    passed, stub = _reference_then_stub(task, go_sandbox)
    assert all(t.name.split("::")[0].endswith("_test.go") for t in passed.tests)
    assert stub.outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.SYNTAX_ERROR)
    assert stub.feedback


def test_a_go_build_error_is_a_syntax_error_with_the_compilers_message(
    polyglot: dict[str, WorkspaceTask], go_sandbox: Sandbox
) -> None:
    task = polyglot["go/bowling"]
    broken = {"bowling.go": dict(task.reference)["bowling.go"] + "\nfunc broken( {\n"}
    verdict = judge_native(broken, task, go_sandbox, LIMITS)
    assert verdict.outcome is Outcome.SYNTAX_ERROR
    assert "bowling.go:" in (verdict.feedback or "") and "syntax error" in (verdict.feedback or "")


def test_a_failing_go_test_says_which_and_why(
    polyglot: dict[str, WorkspaceTask], go_sandbox: Sandbox
) -> None:
    task = polyglot["go/bowling"]
    wrong = dict(task.reference)["bowling.go"].replace("return score, nil", "return score + 1, nil")
    verdict = judge_native({"bowling.go": wrong}, task, go_sandbox, LIMITS)
    assert verdict.outcome is Outcome.FAILED
    assert "FAILED bowling_test.go::TestScore" in (verdict.feedback or "")
    # The run's names for the tests never reach the model.
    assert "TestScore_" not in (verdict.feedback or "")


def _go_bowling(imports: str, rest: str) -> str:
    """A bowling.go with `imports`, the stub's declarations (so that it builds), then
    `rest`."""
    return f"""package bowling

import ({imports})

type Game struct{{}}

func NewGame() *Game {{ return nil }}

func (g *Game) Roll(pins int) error {{ return nil }}

func (g *Game) Score() (int, error) {{ return 0, nil }}
{rest}"""


# An init runs before any test: it reports every test passed, as `go test -v` prints
# it, and exits. This one knows the tests by their names in the public test file.
_FORGE_KNOWN = _go_bowling(
    '"fmt"; "os"',
    """
func init() {
	for _, name := range []string{"TestRoll", "TestScore"} {
		fmt.Printf("=== RUN   %s\\n--- PASS: %s (0.00s)\\n", name, name)
	}
	fmt.Println("PASS")
	os.Exit(0)
}
""",
)
# This one reads the tests' names, as this run's binary has them, from its symbols.
_FORGE_SYMBOLS = _go_bowling(
    '"debug/elf"; "fmt"; "os"; "strings"',
    """
func init() {
	binary, err := elf.Open("/proc/self/exe")
	if err != nil {
		return
	}
	symbols, _ := binary.Symbols()
	for _, symbol := range symbols {
		name := strings.TrimPrefix(symbol.Name, "bowling.")
		if name != symbol.Name && strings.HasPrefix(name, "Test") && !strings.Contains(name, ".") {
			fmt.Printf("=== RUN   %s\\n--- PASS: %s (0.00s)\\n", name, name)
		}
	}
	fmt.Println("PASS")
	os.Exit(0)
}
""",
)
# This one reads the tests' sources while it is built.
_FORGE_EMBED = _go_bowling('_ "embed"', "\n//go:embed bowling_test.go\nvar tests string\n")


@pytest.mark.parametrize(
    ("attack", "guarded_outcome"),
    [(_FORGE_KNOWN, Outcome.ERROR), (_FORGE_SYMBOLS, Outcome.TAMPERED)],
    ids=["known-names", "names-from-the-binary"],
)
def test_a_go_candidate_that_forges_its_tests_report_does_not_pass(
    attack: str,
    guarded_outcome: Outcome,
    polyglot: dict[str, WorkspaceTask],
    go_sandbox: Sandbox,
) -> None:
    task = polyglot["go/bowling"]
    files = {"bowling.go": attack}
    _forgery_stopped(files, task, go_sandbox, guarded_outcome)


def test_a_go_candidate_that_embeds_the_tests_is_refused(
    polyglot: dict[str, WorkspaceTask], go_sandbox: Sandbox
) -> None:
    task = polyglot["go/bowling"]
    verdict = judge_native({"bowling.go": _FORGE_EMBED}, task, go_sandbox, LIMITS)
    assert verdict.outcome is Outcome.REJECTED
    assert "go:embed" in verdict.detail


def test_the_go_toolchain_is_recorded_by_version_and_digest() -> None:
    toolchain = find_toolchain("go").as_dict()
    assert str(toolchain["version"]).startswith("go version go1.")
    digests = toolchain["sha256"]
    assert isinstance(digests, dict) and any(Path(p).name == "go" for p in digests)
    assert all(len(str(d)) == 64 for d in digests.values())


javascript_sandbox = _building("javascript")


@pytest.mark.parametrize("exercise", ["bowling", "list-ops"])
def test_javascript_references_pass_and_stubs_fail(
    exercise: str, polyglot: dict[str, WorkspaceTask], javascript_sandbox: Sandbox
) -> None:
    task = polyglot[f"javascript/{exercise}"]
    _, stub = _reference_then_stub(task, javascript_sandbox)
    assert stub.outcome is Outcome.FAILED
    assert "Remove this statement and implement this function" in (stub.feedback or "")
    assert "/scratch/" not in (stub.feedback or "")


_JS_STUB = "export class Bowling {\n  roll() {}\n  score() {\n    return 0;\n  }\n}\n"
# Reads the tests' titles from the test file and writes Jest's report of them all
# passed where the command line says the report goes, then ends the run.
_JS_FORGE_REPORT = (
    """const fs = require("fs");
const at = process.argv.indexOf("--outputFile");
let titles = [];
try {
  const spec = fs.readFileSync(__dirname + "/bowling.spec.js", "utf8");
  const declared = /\\btest\\(\\s*(['"`])((?:\\\\.|(?!\\1)[^\\\\])*)\\1/g;
  titles = [...spec.matchAll(declared)].map((m) => m[2]);
} catch (error) {}
if (titles.length && at > 0) {
  const results = titles.map((title) => ({ title, status: "passed", failureMessages: [] }));
  const report = { testResults: [{ assertionResults: results, message: "" }] };
  fs.writeFileSync(process.argv[at + 1], JSON.stringify(report));
  process.exit(0);
}
"""
    + _JS_STUB
)
# Registers every test the test file declares with an empty body, which passes.
_JS_FORGE_TESTS = (
    """const registered = globalThis.test;
const forged = (title, body, timeout) => registered(title, () => {}, timeout);
globalThis.test = forged;
globalThis.it = forged;
"""
    + _JS_STUB
)


@pytest.mark.parametrize(
    ("attack", "guarded_outcome"),
    [(_JS_FORGE_REPORT, Outcome.FAILED), (_JS_FORGE_TESTS, Outcome.TAMPERED)],
    ids=["report-from-the-test-file", "empty-tests"],
)
def test_a_javascript_candidate_that_forges_its_tests_report_does_not_pass(
    attack: str,
    guarded_outcome: Outcome,
    polyglot: dict[str, WorkspaceTask],
    javascript_sandbox: Sandbox,
) -> None:
    task = polyglot["javascript/bowling"]
    files = {"bowling.js": attack}
    _forgery_stopped(files, task, javascript_sandbox, guarded_outcome)


rust_sandbox = _building("rust")


# gigasecond builds a crate (time) from Debian's registry, offline.
@pytest.mark.parametrize("exercise", ["acronym", "gigasecond"])
def test_rust_references_pass_and_stubs_fail(
    exercise: str, polyglot: dict[str, WorkspaceTask], rust_sandbox: Sandbox
) -> None:
    task = polyglot[f"rust/{exercise}"]
    _, stub = _reference_then_stub(task, rust_sandbox)
    assert stub.outcome is Outcome.FAILED
    assert "not yet implemented" in (stub.feedback or "")


def test_a_rust_build_error_is_a_syntax_error_with_the_compilers_message(
    polyglot: dict[str, WorkspaceTask], rust_sandbox: Sandbox
) -> None:
    task = polyglot["rust/acronym"]
    verdict = judge_native({"src/lib.rs": "pub fn abbreviate("}, task, rust_sandbox, LIMITS)
    assert verdict.outcome is Outcome.SYNTAX_ERROR
    assert "src/lib.rs" in (verdict.feedback or "") and "error" in (verdict.feedback or "")


# The first test that calls the candidate's function writes every test's pass, as
# libtest prints it, to the process's standard output itself (libtest captures what a
# test prints), and ends the process. This one knows the public test names.
_RUST_FORGE_ONCE = """use std::io::Write;
use std::os::unix::io::FromRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

// Tests run on several threads: the first to get here forges, the others wait for the end.
static FORGING: AtomicBool = AtomicBool::new(false);

fn first() {
    if FORGING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
}
"""
_RUST_FORGE_KNOWN = (
    _RUST_FORGE_ONCE
    + """
pub fn abbreviate(_phrase: &str) -> String {
    first();
    let mut out = unsafe { std::fs::File::from_raw_fd(1) };
    // On one thread libtest has printed this test's name, and waits to print its end.
    writeln!(out).unwrap();
    for name in ["basic", "lowercase_words", "punctuation", "all_caps_word",
                 "punctuation_without_whitespace", "very_long_abbreviation",
                 "consecutive_delimiters", "apostrophes", "underscore_emphasis", "camelcase"] {
        writeln!(out, "test {name} ... ok").unwrap();
    }
    writeln!(out, "\\ntest result: ok.").unwrap();
    std::process::exit(0);
}
"""
)
# This one asks its own test binary for every test's name (`--list`), as this run has them.
_RUST_FORGE_LISTED = (
    _RUST_FORGE_ONCE
    + """
pub fn abbreviate(_phrase: &str) -> String {
    first();
    let mut out = unsafe { std::fs::File::from_raw_fd(1) };
    // On one thread libtest has printed this test's name, and waits to print its end.
    writeln!(out).unwrap();
    let binary = std::env::current_exe().unwrap();
    let listed = std::process::Command::new(binary).arg("--list").output().unwrap();
    for line in String::from_utf8_lossy(&listed.stdout).lines() {
        if let Some(name) = line.strip_suffix(": test") {
            writeln!(out, "test {name} ... ok").unwrap();
        }
    }
    writeln!(out, "\\ntest result: ok.").unwrap();
    std::process::exit(0);
}
"""
)


@pytest.mark.parametrize(
    ("attack", "guarded_outcome"),
    [(_RUST_FORGE_KNOWN, Outcome.ERROR), (_RUST_FORGE_LISTED, Outcome.TAMPERED)],
    ids=["known-names", "names-listed-by-the-binary"],
)
def test_a_rust_candidate_that_forges_its_tests_report_does_not_pass(
    attack: str,
    guarded_outcome: Outcome,
    polyglot: dict[str, WorkspaceTask],
    rust_sandbox: Sandbox,
) -> None:
    task = polyglot["rust/acronym"]
    files = {"src/lib.rs": attack}
    _forgery_stopped(files, task, rust_sandbox, guarded_outcome)


def test_a_rust_candidate_that_includes_the_tests_is_refused(
    polyglot: dict[str, WorkspaceTask], rust_sandbox: Sandbox
) -> None:
    task = polyglot["rust/acronym"]
    source = 'const TESTS: &str = include_str!("../tests/acronym.rs");\n'
    verdict = judge_native({"src/lib.rs": source}, task, rust_sandbox, LIMITS)
    assert verdict.outcome is Outcome.REJECTED


cpp_sandbox = _building("cpp")


# meetup's header includes Boost.Date_Time.
@pytest.mark.parametrize("exercise", ["all-your-base", "meetup"])
def test_cpp_references_pass_and_stubs_fail(
    exercise: str, polyglot: dict[str, WorkspaceTask], cpp_sandbox: Sandbox
) -> None:
    task = polyglot[f"cpp/{exercise}"]
    _, stub = _reference_then_stub(task, cpp_sandbox)
    assert stub.outcome in (Outcome.FAILED, Outcome.SYNTAX_ERROR)
    assert stub.feedback
    # The build's messages name the test file as the task has it, not as the run placed it.
    assert stub.outcome is not Outcome.SYNTAX_ERROR or "_test.cpp" in (stub.feedback or "")


def test_a_failing_cpp_test_says_which_and_why(
    polyglot: dict[str, WorkspaceTask], cpp_sandbox: Sandbox
) -> None:
    task = polyglot["cpp/all-your-base"]
    reference = dict(task.reference)
    wrong = reference["all_your_base.cpp"].replace("value = value * input_base + d;", "")
    files = {"all_your_base.h": reference["all_your_base.h"], "all_your_base.cpp": wrong}
    verdict = judge_native(files, task, cpp_sandbox, LIMITS)
    assert verdict.outcome is Outcome.FAILED
    assert "FAILED all_your_base_test.cpp::binary_to_single_decimal" in (verdict.feedback or "")
    assert "REQUIRE(" in (verdict.feedback or "")


# A wrong convert, and a static initializer that runs before any test: it writes Catch2's
# XML report of every test passed where the command line says the report goes, and
# ends the process. This one knows the tests by their names in the public test file.
_CPP_FORGE = """#include "all_your_base.h"
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace all_your_base {
std::vector<unsigned int> convert(unsigned int, const std::vector<unsigned int>&, unsigned int) {
    return {};
}
}

static std::string report_path() {
    std::ifstream cmdline("/proc/self/cmdline");
    std::string argument, previous;
    while (std::getline(cmdline, argument, '\\0')) {
        if (previous == "-o") return argument;
        previous = argument;
    }
    return "";
}

static std::vector<std::string> names();

static int forged = [] {
    if (getenv("LISTING")) return 0;
    std::ofstream report(report_path());
    report << "<Catch><Group>";
    for (const auto& name : names()) {
        report << "<TestCase name=\\"" << name << "\\">";
        report << "<OverallResult success=\\"true\\"/></TestCase>";
    }
    report << "</Group></Catch>";
    report.close();
    _exit(0);
    return 0;
}();
"""
_CPP_KNOWN = """
static std::vector<std::string> names() {
    return {"single_bit_one_to_decimal", "binary_to_single_decimal", "single_decimal_to_binary",
            "binary_to_multiple_decimal", "decimal_to_binary", "trinary_to_hexadecimal",
            "hexadecimal_to_trinary", "fifteen_bit_integer", "empty_list", "single_zero",
            "multiple_zeros", "leading_zeros", "first_base_is_one", "first_base_is_zero",
            "invalid_positive_digit", "second_base_is_one", "second_base_is_zero"};
}
"""
# This one asks its own binary for every test's name, as this run has them.
_CPP_LISTED = """
static std::vector<std::string> names() {
    char binary[4096] = {0};
    readlink("/proc/self/exe", binary, sizeof binary - 1);
    setenv("LISTING", "1", 1);
    std::string command = std::string(binary) + " --list-test-names-only";
    std::vector<std::string> found;
    FILE* listed = popen(command.c_str(), "r");
    char line[4096];
    while (listed && fgets(line, sizeof line, listed)) {
        std::string name(line);
        while (!name.empty() && (name.back() == '\\n' || name.back() == '\\r')) name.pop_back();
        if (!name.empty()) found.push_back(name);
    }
    return found;
}
"""


@pytest.mark.parametrize(
    ("names", "guarded_outcome"),
    [(_CPP_KNOWN, Outcome.ERROR), (_CPP_LISTED, Outcome.TAMPERED)],
    ids=["known-names", "names-listed-by-the-binary"],
)
def test_a_cpp_candidate_that_forges_its_tests_report_does_not_pass(
    names: str,
    guarded_outcome: Outcome,
    polyglot: dict[str, WorkspaceTask],
    cpp_sandbox: Sandbox,
) -> None:
    task = polyglot["cpp/all-your-base"]
    header = dict(task.reference)["all_your_base.h"]
    files = {"all_your_base.h": header, "all_your_base.cpp": _CPP_FORGE + names}
    _forgery_stopped(files, task, cpp_sandbox, guarded_outcome)


java_sandbox = _building("java")


# bowling's reference adds a class of its own (Frame) beside the model's file.
@pytest.mark.parametrize("exercise", ["affine-cipher", "bowling"])
def test_java_references_pass_and_stubs_fail(
    exercise: str, polyglot: dict[str, WorkspaceTask], java_sandbox: Sandbox
) -> None:
    task = polyglot[f"java/{exercise}"]
    _, stub = _reference_then_stub(task, java_sandbox)
    assert stub.outcome is Outcome.FAILED
    assert "UnsupportedOperationException" in (stub.feedback or "")


# A static initializer, run when a test first touches the class: it writes the
# launcher's XML report of every test passed where the command line says reports go,
# and halts the JVM. This one knows the tests by their names in the public test file.
_JAVA_FORGE = """import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public class AffineCipher {
    static {
        try {
            List<String> arguments = ProcessHandle.current().info().arguments()
                .map(Arrays::asList).orElse(List.of());
            Path reports = Path.of(arguments.get(arguments.indexOf("--reports-dir") + 1));
            StringBuilder xml = new StringBuilder("<testsuite>");
            for (String name : names()) {
                xml.append("<testcase name=\\"").append(name).append("()\\"/>");
            }
            Files.createDirectories(reports);
            Files.writeString(reports.resolve("TEST-junit-jupiter.xml"), xml + "</testsuite>");
        } catch (Exception error) {
        }
        Runtime.getRuntime().halt(0);
    }

    public String encode(String text, int coefficient1, int coefficient2) {
        return "";
    }

    public String decode(String text, int coefficient1, int coefficient2) {
        return "";
    }
"""
_JAVA_KNOWN = """
    static List<String> names() {
        return List.of("testEncodeYes", "testEncodeNo", "testEncodeOMG", "testEncodeO_M_G",
            "testEncodeMindBlowingly", "testEncodeNumbers", "testEncodeDeepThought",
            "testEncodeAllTheLetters", "testEncodeThrowsMeaningfulException",
            "testDecodeExercism", "testDecodeSentence", "testDecodeNumbers",
            "testDecodeAllTheLetters", "testDecodeWithNoSpaces", "testDecodeWithTooManySpaces",
            "testDecodeThrowsMeaningfulException");
    }
}
"""
# This one finds the test class on its stack and reads its test methods' names by
# reflection, as this run has them.
_JAVA_REFLECTED = """
    static List<String> names() {
        List<String> found = new ArrayList<>();
        for (StackTraceElement frame : new Throwable().getStackTrace()) {
            if (!frame.getClassName().endsWith("Test")) {
                continue;
            }
            try {
                for (var method : Class.forName(frame.getClassName()).getDeclaredMethods()) {
                    if (method.isAnnotationPresent(org.junit.jupiter.api.Test.class)) {
                        found.add(method.getName());
                    }
                }
            } catch (ClassNotFoundException error) {
            }
            break;
        }
        return found;
    }
}
"""


@pytest.mark.parametrize(
    ("names", "guarded_outcome"),
    [(_JAVA_KNOWN, Outcome.ERROR), (_JAVA_REFLECTED, Outcome.TAMPERED)],
    ids=["known-names", "names-by-reflection"],
)
def test_a_java_candidate_that_forges_its_tests_report_does_not_pass(
    names: str,
    guarded_outcome: Outcome,
    polyglot: dict[str, WorkspaceTask],
    java_sandbox: Sandbox,
) -> None:
    task = polyglot["java/affine-cipher"]
    files = {"src/main/java/AffineCipher.java": _JAVA_FORGE + names}
    _forgery_stopped(files, task, java_sandbox, guarded_outcome)


def test_a_run_binds_and_records_the_toolchains_of_its_tasks_languages(
    polyglot: dict[str, WorkspaceTask],
) -> None:
    tasks = [polyglot["go/bowling"], polyglot["rust/acronym"], polyglot["python/bowling"]]
    prepared = KINDS.get("workspace").prepare(tasks, None, None, "codetrial run")
    with JudgePool.for_tasks(1, SandboxPolicy(LIMITS), prepared) as pool:
        assert pool.limits.max_processes == BUILD_PROCESSES
        recorded = pool.toolchains
    assert set(recorded) == {"go", "rust"}
    assert all(entry["version"] and entry["sha256"] for entry in recorded.values())


def test_codetrial_lists_the_benchmark_and_checks_a_go_response(tmp_path: Path) -> None:
    listed = cli("tasks", "--suite", "polyglot", "--data", BENCHMARK)
    assert listed.returncode == 0, listed.stderr
    assert "go/bowling" in listed.stdout and "cpp/all-your-base" in listed.stdout
    reference = BENCHMARK / "go" / "exercises" / "practice" / "bowling" / ".meta" / "example.go"
    response = tmp_path / "response.md"
    response.write_text(f"bowling.go\n```go\n{reference.read_text()}```\n")
    args = ["--task", "bowling", "--suite", "polyglot-go", "--data", BENCHMARK]
    checked = cli("check", response, *args)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "passed" in checked.stdout
