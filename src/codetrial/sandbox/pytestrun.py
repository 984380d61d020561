"""The in-sandbox pytest runner: a repository's own tests, in its own checkout.

Runs inside the sandbox from a read-only file, with pytest imported from the task's
package environment (bound read-only). A repository's tests need pytest's collection,
fixtures and the project's conftest files, so unlike testrun.py this runner reads the
test files from the workspace; the trusted side wrote the pristine ones there (see
`codetrial.verdict.repository`). What it does to make forging hard:

- the channel and the nonce are in hand, and the reporting plugin registered, before
  pytest imports any of the repository's code;
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
from typing import Any, NoReturn

from testrun import TRACE_CHARS, Channel

_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


class _Reporter:
    """A pytest plugin by its method names: one record per test, when it is done."""

    def __init__(self, channel: Channel, workspace: str) -> None:
        self.channel = channel
        self.workspace = workspace
        self.pending: dict[str, dict[str, Any]] = {}
        self.raised: dict[str, str] = {}
        self.count = 0

    def _trace(self, text: str) -> str:
        return text.replace(self.workspace + os.sep, "")[-TRACE_CHARS:]

    def pytest_runtest_logreport(self, report: Any) -> None:
        record = self.pending.setdefault(report.nodeid, {"outcome": "passed", "seconds": 0.0})
        record["seconds"] += report.duration
        if report.when == "call" and hasattr(report, "wasxfail"):
            record["xfail"] = True
        outcome = report.outcome
        if report.failed and report.when != "call":
            outcome = "error"
        if _SEVERITY[outcome] > _SEVERITY[record["outcome"]]:
            record["outcome"] = outcome
            if report.failed:
                record["trace"] = self._trace(report.longreprtext)
                record["exception"] = self.raised.get(report.nodeid)

    def pytest_runtest_makereport(self, item: Any, call: Any) -> Any:
        """A hook wrapper (marked so in `run`, once pytest is imported): the type of
        what a test raised, which its report does not keep."""
        yield
        if call.excinfo is not None:
            self.raised.setdefault(item.nodeid, call.excinfo.typename)

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        record = self.pending.pop(nodeid, None)
        if record is not None:
            self.channel.send({"test": nodeid, **record})
            self.count += 1

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            trace = self._trace(report.longreprtext)
            self.channel.send({"collection_error": report.nodeid or "<session>", "trace": trace})


def run(spec: dict[str, Any], out_fd: int, workspace: str) -> NoReturn:
    """Run pytest as `spec["pytest"]` says ({"environment", "python_path", "args",
    "files"}) in `workspace`, report on `out_fd`, and end the process."""
    channel = Channel(out_fd, spec["nonce"])
    settings = spec["pytest"]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    paths = [os.path.join(workspace, folder) for folder in settings["python_path"]]
    sys.path[:0] = [*paths, settings["environment"]]
    reporter = _Reporter(channel, workspace)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    try:
        import pytest

        wrapper = pytest.hookimpl(hookwrapper=True)
        _Reporter.pytest_runtest_makereport = wrapper(_Reporter.pytest_runtest_makereport)  # type: ignore[method-assign]
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
        channel.send({"collection_error": "<session>", "trace": repr(exc)[-TRACE_CHARS:]})
        code = -1
    channel.send({"end": reporter.count, "exit": int(code)})
    os._exit(0)
