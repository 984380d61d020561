"""The in-sandbox test runner: a task's own tests, next to the candidate's files.

Standard library only: it runs inside the sandbox from a read-only file. Used where
tests must share a process with the candidate's objects (they construct them and pass
callbacks into them), so the verdict can only be as honest as that process. What it
does to make forging hard:

- the test files come from pristine copies sent by the trusted side and are imported
  from memory (their lines are given to `linecache`, so tracebacks quote them), never
  from the workspace, which the candidate can write;
- the channel to the trusted side (a descriptor the server opened) and the run's
  nonce are in hand before any candidate code is imported, with the writer and a
  serializer of its own taken then too (see `channel`), so rebinding `json`, `os`
  or the builtins later changes no record; every record carries the nonce; the run
  ends with an end record and `os._exit`, so neither a candidate's exit (`sys.exit`,
  `os._exit`, an `atexit` handler) nor anything it prints can look like a finished
  run;
- the test machinery (unittest's classes, the builtins) is snapshot before and
  compared after: a candidate that patched it has its run marked as tampered.

Tests are unittest TestCase classes defined in a test file, and module-level
`test*` functions that take nothing. No plugin, conftest or configuration file is
ever read. Records, one JSON line each:

    {"nonce", "test": "file::Class::method", "outcome", "exception", "trace", "seconds"}
    {"nonce", "tampered": [names]}
    {"nonce", "interfered": [what the candidate's process did]}  (tests run apart)
    {"nonce", "gone" | "oversize": why}  (tests run apart: the exchange ended early)
    {"nonce", "end": number of tests run}
"""

from __future__ import annotations

import builtins
import importlib
import importlib.machinery
import json
import linecache
import os
import sys
import time
import types
from collections.abc import Callable
from typing import Any, NoReturn

TRACE_CHARS = 4000


def _module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


class _Pristine:
    """A meta path finder and loader that serves the test files (and their helper
    modules) from the sources sent by the trusted side, whatever is on disk under
    those names. Duck-typed: importlib's ABCs would cost the worker's start-up."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.sources = {_module_name(path): (path, text) for path, text in sources.items()}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.sources:
            return None
        loader: Any = self  # a Loader by its methods, not by inheritance
        return importlib.machinery.ModuleSpec(name, loader, origin=self.sources[name][0])

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        path, text = self.sources[module.__name__]
        module.__file__ = path
        linecache.cache[path] = (len(text), None, text.splitlines(keepends=True), path)
        exec(compile(text, path, "exec"), module.__dict__)


Send = Callable[[dict[str, Any]], None]


def channel(fd: int, nonce: str) -> Send:
    """The sender of records to the trusted side, each a JSON line with the nonce; a
    record that cannot be sent ends the run, which then has no end record.

    Called before any candidate code is imported, it holds everything a record goes
    through (the writer, the exit, its own serializer, the builtins and types they
    use) in its closure, so a candidate that later binds other objects to names in
    `os`, `json`, `builtins` or this module changes nothing that is sent. Values
    whose type is not exactly a JSON one are sent as null: no method a candidate
    could have defined is called."""
    write, end, failure = os.write, os._exit, OSError
    kind, items, join, translate, encode = type, dict.items, str.join, str.translate, str.encode
    text, boolean, integer, real, mapping, sequence = str, bool, int, float, dict, list
    whole, number, infinite = int.__repr__, float.__repr__, (float("inf"), float("-inf"))
    escapes = {i: f"\\u{i:04x}" for i in range(32)} | {ord('"'): '\\"', ord("\\"): "\\\\"}

    def serialized(value: Any) -> str:
        what = kind(value)
        if what is text:
            return '"' + translate(value, escapes) + '"'
        if what is boolean:
            return "true" if value is True else "false"
        if what is integer:
            return whole(value)
        if what is real:
            return number(value) if value == value and value not in infinite else "null"
        if what is mapping:
            pairs = [
                serialized(k) + ":" + serialized(v) for k, v in items(value) if kind(k) is text
            ]
            return "{" + join(",", pairs) + "}"
        if what is sequence:
            return "[" + join(",", [serialized(v) for v in value]) + "]"
        return "null"

    def send(record: dict[str, Any]) -> None:
        data = encode(serialized({"nonce": nonce, **record}) + "\n", "utf-8", "replace")
        try:
            while data:
                data = data[write(fd, data) :]
        except failure:
            end(1)

    return send


def exposed(fd: int, nonce: str) -> Send:
    """A naive runner's channel, which sends through the `json` and `os` of the
    moment: the code under test can rebind them. Only for the tests that show what
    the captured channel stops (`"guarded": false` in the spec)."""

    def send(record: dict[str, Any]) -> None:
        os.write(fd, (json.dumps({"nonce": nonce, **record}) + "\n").encode())

    return send


def _machinery(unittest: Any) -> dict[str, int]:
    """Identities of what a verdict rests on, to compare after the run."""
    watched = {
        "builtins": vars(builtins),
        "unittest.case": vars(unittest.case),
        "unittest.TestCase": vars(unittest.TestCase),
        "unittest.TestResult": vars(unittest.TestResult),
        "unittest.TestSuite": vars(unittest.TestSuite),
    }
    return {
        f"{where}.{name}": id(value)
        for where, names in watched.items()
        for name, value in list(names.items())
    }


def _cases(unittest: Any, module: types.ModuleType, path: str) -> list[tuple[str, Any]]:
    """(record id, runnable) for the module's own TestCase classes and its own test
    functions that take nothing: what `expected_tests` reads from the file's syntax."""
    found: list[tuple[str, Any]] = []
    loader = unittest.TestLoader()
    for name, value in list(vars(module).items()):
        if isinstance(value, type) and issubclass(value, unittest.TestCase):
            if value.__module__ == module.__name__:
                for method in loader.getTestCaseNames(value):
                    found.append((f"{path}::{name}::{method}", value(method)))
        elif (
            name.startswith("test")
            and isinstance(value, types.FunctionType)
            and value.__module__ == module.__name__
            and value.__code__.co_argcount == 0
        ):
            found.append((f"{path}::{name}", unittest.FunctionTestCase(value)))
    return found


def _result_class(unittest: Any, hidden: str | None) -> Any:
    """unittest's TestResult, keeping each problem (a subtest's too) with the name of
    its exception (the last line of a trace need not be it: an assertion's diff may end
    it), and leaving the frames of the file `hidden` out of the traces it keeps."""

    class Result(unittest.TestResult):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.problems: list[tuple[str, str, str]] = []  # outcome, trace, exception

        def addError(self, test: Any, err: Any) -> None:
            before = len(self.errors)
            super().addError(test, _without(err, hidden))
            self._kept("error", self.errors[before:], err)

        def addFailure(self, test: Any, err: Any) -> None:
            before = len(self.failures)
            super().addFailure(test, _without(err, hidden))
            self._kept("failed", self.failures[before:], err)

        def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
            errors, failures = len(self.errors), len(self.failures)
            super().addSubTest(test, subtest, err if err is None else _without(err, hidden))
            self._kept("error", self.errors[errors:], err)
            self._kept("failed", self.failures[failures:], err)

        def _kept(self, outcome: str, added: list[Any], err: Any) -> None:
            """Keep the problems unittest added, with their exception's name."""
            self.problems.extend((outcome, trace, err[0].__name__) for _, trace in added)

    return Result


def _without(err: Any, hidden: str | None) -> Any:
    """An exception's (type, value, traceback) with the frames of `hidden` unlinked."""
    kind, value, tb = err
    kept = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != hidden:
            kept.append(tb)
        tb = tb.tb_next
    for earlier, later in zip(kept, [*kept[1:], None], strict=True):
        earlier.tb_next = later
    return kind, value, kept[0] if kept else None


def _run_one(result: Any, case: Any) -> dict[str, Any]:
    started = time.perf_counter()
    case.run(result)
    seconds = time.perf_counter() - started
    problems = sorted(result.problems, key=lambda problem: problem[0] != "error")
    problems += [("failed", "unexpected success", "failed") for _ in result.unexpectedSuccesses]
    record: dict[str, Any] = {"outcome": "passed", "seconds": seconds}
    if problems:
        outcome, trace, kind = problems[0]
        record.update(outcome=outcome, trace=trace, exception=kind)
    elif result.skipped:
        record["outcome"] = "skipped"
    return record


def run(
    spec: dict[str, Any], out_fd: int, workspace: str, peer: tuple[int, int] | None = None
) -> NoReturn:
    """Run the tests in `spec` ({"tests": {path: source}, "nonce", "guarded"?,
    "modules"?}) against the files in `workspace`, report on `out_fd`, and end the
    process. `"guarded": false` runs as a naive runner would, with the exposed channel
    and no snapshot of the test machinery. With a `peer` (the descriptors to read from
    and write to), the candidate's modules (`"modules"`: name -> path) are in another process,
    reached through remote.py, and `workspace` holds none of its files."""
    import unittest

    def trace(text: str) -> str:
        """Paths relative to the workspace, as the model knows them; the end kept."""
        return text.replace(workspace + os.sep, "")[-TRACE_CHARS:]

    guarded = spec.get("guarded", True)
    send = (channel if guarded else exposed)(out_fd, spec["nonce"])
    tests: dict[str, str] = spec["tests"]
    before = _machinery(unittest) if guarded else {}
    sys.meta_path.insert(0, _Pristine(tests))
    end = None
    if peer is None:
        sys.path.insert(0, workspace)
        results = _result_class(unittest, None)
    else:
        import remote

        end = remote.TestSide(remote.Wire(*peer), frozenset(tests))
        sys.meta_path.insert(1, remote.Modules(end, spec["modules"]))
        results = _result_class(unittest, remote.__file__)
    ran = 0
    for path in sorted(tests):
        try:
            module = importlib.import_module(_module_name(path))
        except BaseException as exc:  # the candidate's import may raise anything
            send({"collection_error": path, "trace": trace(format_exception(exc, workspace))})
            module = None
        for test_id, case in _cases(unittest, module, path) if module else ():
            if end is not None and end.stopped:
                break
            record = _run_one(results(), case)
            late = end.scope() if end is not None else None
            if late is not None:
                record.update(
                    outcome="failed" if isinstance(late, AssertionError) else "error",
                    trace=format_exception(late, workspace),
                    exception=type(late).__name__,
                )
            if "trace" in record:
                record["trace"] = trace(record["trace"])
            send({"test": test_id, **record})
            ran += 1
        if end is not None and end.stopped:
            send(_stopped(end))
            break
    changed = sorted(k for k, v in _machinery(unittest).items() if guarded and before.get(k) != v)
    if changed:
        send({"tampered": changed[:20]})
    if end is not None and end.refused:
        send({"interfered": [f"the candidate's process {why}" for why in end.refused[:20]]})
    send({"end": ran})
    os._exit(0)


def _stopped(end: Any) -> dict[str, Any]:
    """The record of an exchange with the candidate's process that could not go on:
    it is gone (a limit, an exit), sent too much, or broke the protocol."""
    import remote

    stop = end.stopped
    if isinstance(stop, remote.Broken):
        return {"interfered": [f"the candidate's process broke the protocol: {stop}"]}
    return {"gone" if isinstance(stop, remote.Gone) else "oversize": str(stop)}


def format_exception(exc: BaseException, workspace: str) -> str:
    """The exception as Python prints it, with only the frames of the workspace's
    files and the test files: the import machinery's and this runner's left out."""
    return "".join(_shown(exc, workspace).format())


def workspace_frames(exc: BaseException, workspace: str) -> str:
    """The frames of an exception's traceback in the workspace's files, as Python
    prints them (paths relative to it, without the markers under each line's
    expression, which cost more to place than the rest); empty when it has none."""
    import traceback

    frames = [
        (frame, line)
        for frame, line in traceback.walk_tb(exc.__traceback__)
        if frame.f_code.co_filename.startswith(workspace)
    ]
    stack = traceback.StackSummary.extract(iter(frames), lookup_lines=False)
    return "".join(stack.format()).replace(workspace + os.sep, "")


def _shown(exc: BaseException, workspace: str) -> Any:
    import traceback

    shown = traceback.TracebackException.from_exception(exc, lookup_lines=False)
    shown.stack = traceback.StackSummary.from_list(
        [
            frame
            for frame in shown.stack
            if not frame.filename.startswith(("/", "<")) or frame.filename.startswith(workspace)
        ]
    )
    return shown
