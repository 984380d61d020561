"""A pytest plugin loaded into sandboxed test runs: it writes per-test results as JSON.

The file named by $CODETRIAL_RESULTS receives {"collected": n, "finished": bool,
"tests": [{"name", "outcome", "exception_type", "duration_s"}]}.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import pytest

_results: list[dict[str, Any]] = []
_collected: list[int] = [0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _collected[0] = len(items)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _results.append(
            {
                "name": report.nodeid or "<collection>",
                "outcome": "error",
                "exception_type": "CollectionError",
                "duration_s": 0.0,
            }
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call" or report.failed:
        _results.append(
            {
                "name": item.name,
                "outcome": report.outcome if report.when == "call" else "error",
                "exception_type": call.excinfo.typename if call.excinfo else None,
                "duration_s": report.duration,
            }
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("CODETRIAL_RESULTS")
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"collected": _collected[0], "finished": True, "tests": _results}, handle)
