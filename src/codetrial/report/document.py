"""Reports built from the store alone: results.json and a self-contained report.html."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from codetrial.records import Outcome, TaskResult, labelled
from codetrial.report.charts import (
    first_vs_repaired,
    judge_chart,
    outcome_breakdown,
    pass_at_k_bars,
    release_month_bars,
    strategy_bars,
)
from codetrial.report.questions import FixGain, ModePair, ModeRow, fix_gains, mode_pairs, mode_rows
from codetrial.report.questions import images as question_images
from codetrial.report.review import needs_a_person
from codetrial.report.summary import (
    EditSummary,
    EfficiencySummary,
    Integrity,
    ModelSummary,
    MonthPass,
    PassAtK,
    RepositorySummary,
    SuspectLine,
    by_release_month,
    cell,
    edit_summaries,
    efficiency_summaries,
    matrix,
    pass_at_k_rows,
    repository_summaries,
    summarize,
    suspect_lines,
)
from codetrial.store import RunStore
from codetrial.store.artifacts import read_json, slug, write_atomic
from codetrial.store.manifest import Manifest
from codetrial.verdict.workspace import changes

SELECTION = "selection.json"
JUDGE_EVAL = "judge_eval.json"
EFFICIENCY = "efficiency.json"


@dataclass(frozen=True)
class Figures:
    """What the reports and the console tables show, computed once from the store."""

    results: list[TaskResult]
    rows: list[ModelSummary]
    pass_at_k: list[PassAtK]
    by_month: list[MonthPass]  # problems that carry a release date only
    edits: list[EditSummary]
    repositories: list[RepositorySummary]
    efficiency: dict[str, Any]  # efficiency.json as measured ({} when it was not)
    efficiency_rows: list[EfficiencySummary]
    modes: list[ModeRow]  # questions only, as the next two
    mode_pairs: list[ModePair]
    fix_gains: list[FixGain]
    suspects: list[SuspectLine]  # the static scan's findings, attempt by attempt


def figures(store: RunStore) -> Figures:
    manifest = store.manifest
    config = manifest.config
    results = store.task_results()
    efficiency = read_json(store.run_dir / EFFICIENCY, dict)
    labels = {
        (model, mode): labelled(model, mode) for model in config.models for mode in config.modes
    }
    return Figures(
        results=results,
        rows=summarize(results, config.labels, config.prices),
        pass_at_k=pass_at_k_rows(results, config.labels, list(manifest.task_sha256)),
        by_month=by_release_month(results, config.labels, manifest.released),
        edits=edit_summaries(
            results,
            config.labels,
            edited_tasks(manifest),
            config.edit_format or "",
            config.repair_attempts + 1,
            config.prices,
        ),
        repositories=repository_summaries(results, config.models, list(manifest.repositories)),
        efficiency=efficiency,
        efficiency_rows=efficiency_summaries(efficiency, config.models),
        modes=mode_rows(results, config.labels) if config.modes else [],
        mode_pairs=mode_pairs(results, config.labels) if config.modes else [],
        fix_gains=fix_gains(results, config.models, labels),
        suspects=suspect_lines(results),
    )


def edited_tasks(manifest: Manifest) -> set[str]:
    """The tasks a model answered in an edit format: workspace tasks, and repository
    tasks when a model was asked for the fix (not when patches came from a file)."""
    repositories = set(manifest.repositories) if manifest.config.edit_format else set()
    return set(manifest.workspaces) | repositories


def render(template: str, **context: Any) -> str:
    """A template from report/templates, escaped, failing on any missing name."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.files("codetrial.report") / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return environment.get_template(template).render(**context)


def _diff(before: str | None, after: str | None) -> str:
    lines = difflib.unified_diff(
        (before or "").splitlines(), (after or "").splitlines(), "first", "repaired", lineterm=""
    )
    return "\n".join(lines)


def _context(store: RunStore, figures: Figures) -> dict[str, Any]:
    manifest = store.manifest
    models = manifest.config.labels
    results, rows, pass_at_k = figures.results, figures.rows, figures.pass_at_k
    outcomes = [o.value for o in Outcome]
    breakdown = {
        m: {o: sum(r.first.outcome.value == o for r in results if r.model == m) for o in outcomes}
        for m in models
    }
    task_ids = list(manifest.task_sha256)
    selection = read_json(store.run_dir / SELECTION, list)
    judge_eval = read_json(store.run_dir / JUDGE_EVAL, list)
    return {
        "selection": [{**s, "chart": strategy_bars(s["strategies"])} for s in selection],
        "judge_eval": [{**j, "chart": judge_chart(j)} for j in judge_eval],
        "manifest": manifest,
        "unsafe": manifest.config.unsafe_host_exec,
        "conditions": json.loads(manifest.model_dump_json()),
        "rows": rows,
        "integrity_headers": Integrity.HEADERS,
        "chart": first_vs_repaired(rows) if rows else "",
        "outcomes": outcomes,
        "breakdown": breakdown,
        "models": models,
        "matrix": matrix(results, models, task_ids),
        "pass_at_k": pass_at_k,
        "by_month": figures.by_month,
        "by_month_chart": release_month_bars(figures.by_month) if figures.by_month else "",
        "pass_at_k_chart": pass_at_k_bars(pass_at_k) if pass_at_k else "",
        "outcome_chart": outcome_breakdown(breakdown) if results else "",
        "results": [r for r in results if r.sample == 0],
        "edits": figures.edits,
        "repositories": figures.repositories,
        "repository_ids": set(manifest.repositories),
        "efficiency": figures.efficiency,
        "efficiency_rows": figures.efficiency_rows,
        "workspaces": manifest.workspaces,
        "trust": manifest.trust,
        "cell": cell,
        "slug": slug,
        "diff": _diff,
        "changes": changes,
        "modes": figures.modes,
        "mode_pairs": figures.mode_pairs,
        "fix_gains": figures.fix_gains,
        "suspects": figures.suspects,
        "review": needs_a_person(store.run_dir, results),
        "images": (lambda result: question_images(store.run_dir, result)),
    }


def build(store: RunStore, figures: Figures) -> Path:
    """Render report.html into the run directory and return its path."""
    html = render("report.html.j2", **_context(store, figures))
    path = store.run_dir / "report.html"
    write_atomic(path, html)
    return path


def results_document(store: RunStore, figures: Figures) -> dict[str, Any]:
    """What results.json holds: the manifest, the summary rows and every task's attempts."""
    return {
        "manifest": json.loads(store.manifest.model_dump_json()),
        "summary": [row.as_dict() for row in figures.rows],
        "pass_at_k": [row.as_dict() for row in figures.pass_at_k],
        "by_release_month": [row.as_dict() for row in figures.by_month],
        "edits": [row.as_dict() for row in figures.edits],
        "repositories": [row.as_dict() for row in figures.repositories],
        "efficiency": {
            **figures.efficiency,
            "summary": [row.as_dict() for row in figures.efficiency_rows],
        }
        if figures.efficiency
        else None,
        "questions": {
            "modes": [row.as_dict() for row in figures.modes],
            "pairs": [pair.as_dict() for pair in figures.mode_pairs],
            "fix_gains": [gain.as_dict() for gain in figures.fix_gains],
        }
        if figures.modes
        else None,
        "suspects": [line.as_dict() for line in figures.suspects],
        "tasks": [
            {
                "model": r.model,
                "task_id": r.task_id,
                "sample": r.sample,
                "first_passed": r.first.passed,
                "passed_after_repair": r.passed_after_repair,
                "attempts": [a.model_dump(mode="json") for a in r.attempts],
            }
            for r in figures.results
        ],
    }


def write_reports(store: RunStore, computed: Figures | None = None) -> Path:
    """results.json and report.html; `computed` saves recomputing what the caller has."""
    computed = computed or figures(store)
    write_atomic(
        store.run_dir / "results.json", json.dumps(results_document(store, computed), indent=2)
    )
    return build(store, computed)
