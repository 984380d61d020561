"""Reports built from the store alone: results.json and a self-contained report.html
(written by `codetrial.report.document`)."""

from codetrial.report.document import (
    EFFICIENCY,
    JUDGE_EVAL,
    SELECTION,
    Figures,
    figures,
    render,
    results_document,
    write_reports,
)
from codetrial.report.summary import (
    EditSummary,
    EfficiencySummary,
    ModelSummary,
    RepositorySummary,
    cell,
    summarize,
)

__all__ = [
    "EFFICIENCY",
    "JUDGE_EVAL",
    "SELECTION",
    "EditSummary",
    "EfficiencySummary",
    "Figures",
    "ModelSummary",
    "RepositorySummary",
    "cell",
    "figures",
    "render",
    "results_document",
    "summarize",
    "write_reports",
]
