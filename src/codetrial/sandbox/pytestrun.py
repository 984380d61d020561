"""The in-sandbox pytest runner: a repository's own tests, in its own checkout.

Runs inside the sandbox from a read-only file, with pytest imported from the task's
package environment (bound read-only). A repository's tests need pytest's collection,
fixtures and the project's conftest files, so unlike testrun.py this runner reads the
test files from the workspace; the trusted side wrote the pristine ones there (see
`codetrial.verdict.repository`). What it does to make forging hard:

- the channel (its writer and serializer, see `testrun.channel`) and the nonce are
  in hand, and the reporting plugin made with what it decides by in its closure,
  before pytest imports any of the repository's code: rebinding names in `json`,
  `os`, the builtins or the runner's own modules changes no record;
- plugins installed in the environment are never loaded automatically, and the cache
  plugin is off, so only the repository's own conftest files take part;
- the run ends with an end record and `os._exit`, so neither a candidate's exit nor
  anything it prints can look like a finished run; pytest's own terminal output goes
  nowhere (a large suite's failures would only fill the output limit), each failure's
  text travels in its record.

Records, one JSON line each:

    {"nonce", "test": node id, "outcome", "xfail"?, "exception", "trace", "seconds"}
    {"nonce", "collection_error": node id, "trace"}
    {"nonce", "end": number of tests reported, "exit": pytest's exit code}
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from testrun import TRACE_CHARS, Send, channel, exposed


def _reporter(send: Send, workspace: str) -> tuple[Any, Callable[[], int]]:
    """A pytest plugin by its method names, which sends one record per test when it
    is done, and how many it has sent. Made before any of the repository's code is
    imported, with what it decides by and sends with in its closure, not looked up in
    modules that code could rebind."""
    has, bare, prefix, tail = hasattr, str.replace, workspace + os.sep, -TRACE_CHARS
    severity = ("passed", "skipped", "failed", "error").index
    pending: dict[str, dict[str, Any]] = {}
    raised: dict[str, str] = {}
    sent = [0]

    def trace(text: str) -> str:
        return bare(text, prefix, "")[tail:]

    class Reporter:
        def pytest_runtest_logreport(self, report: Any) -> None:
            record = pending.setdefault(report.nodeid, {"outcome": "passed", "seconds": 0.0})
            record["seconds"] += report.duration
            if report.when == "call" and has(report, "wasxfail"):
                record["xfail"] = True
            outcome = report.outcome
            if report.failed and report.when != "call":
                outcome = "error"
            if severity(outcome) > severity(record["outcome"]):
                record["outcome"] = outcome
                if report.failed:
                    record["trace"] = trace(report.longreprtext)
                    record["exception"] = raised.get(report.nodeid)

        def pytest_runtest_makereport(self, item: Any, call: Any) -> Any:
            """A hook wrapper (marked so in `run`, once pytest is imported): the type of
            what a test raised, which its report does not keep."""
            yield
            if call.excinfo is not None:
                raised.setdefault(item.nodeid, call.excinfo.typename)

        def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
            record = pending.pop(nodeid, None)
            if record is not None:
                send({"test": nodeid, **record})
                sent[0] += 1

        def pytest_collectreport(self, report: Any) -> None:
            if report.failed:
                where = report.nodeid or "<session>"
                send({"collection_error": where, "trace": trace(report.longreprtext)})

    return Reporter(), lambda: sent[0]


def run(spec: dict[str, Any], out_fd: int, workspace: str) -> NoReturn:
    """Run pytest as `spec["pytest"]` says ({"environment", "python_path", "args",
    "files", "guarded"?}) in `workspace`, report on `out_fd`, and end the process."""
    settings = spec["pytest"]
    guarded = settings.get("guarded", True)
    send = (channel if guarded else exposed)(out_fd, spec["nonce"])
    end, text, integer, tail = os._exit, repr, int, -TRACE_CHARS
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    paths = [os.path.join(workspace, folder) for folder in settings["python_path"]]
    sys.path[:0] = [*paths, settings["environment"]]
    reporter, count = _reporter(send, workspace)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    try:
        import pytest

        wrapper = pytest.hookimpl(hookwrapper=True)
        kind = type(reporter)
        kind.pytest_runtest_makereport = wrapper(kind.pytest_runtest_makereport)
        code = pytest.main(
            [
                "-p",
                "no:cacheprovider",
                "--rootdir",
                workspace,
                "-q",
                *settings["args"],
                *settings["files"],
            ],
            plugins=[reporter],
        )
    except BaseException as exc:  # the candidate's import may raise anything
        send({"collection_error": "<session>", "trace": text(exc)[tail:]})
        code = -1
    send({"end": count(), "exit": integer(code)})
    end(0)
