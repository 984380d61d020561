"""Charts rendered offline with matplotlib, returned as inline SVG text."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from codetrial.report.summary import ModelSummary, PassAtK

OUTCOME_COLOURS = {
    "passed": "#59a14f", "failed": "#e15759", "error": "#ff9da7", "timeout": "#b07aa1",
    "memory": "#9c755f", "output_limit": "#76b7b2", "syntax_error": "#f28e2b",
    "rejected": "#edc948", "no_code": "#bab0ac", "infra_error": "#4e79a7",
}  # fmt: skip


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "codetrial"
    from matplotlib import pyplot

    return pyplot


def _svg(fig: Any) -> str:
    """The figure as inline SVG, without a date, so reports rebuild identically."""
    plt = _pyplot()
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def first_vs_repaired(rows: Sequence[ModelSummary]) -> str:
    """Grouped bars: tasks passed on the first attempt and after repair, per model."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(rows) + 2), 3.2))
    positions = range(len(rows))
    width = 0.38
    first = [r.first_pass for r in rows]
    final = [r.after_repair for r in rows]
    ax.bar([p - width / 2 for p in positions], first, width, label="first attempt", color="#4c78a8")
    ax.bar([p + width / 2 for p in positions], final, width, label="after repair", color="#59a14f")
    for p, (a, b) in enumerate(zip(first, final, strict=True)):
        ax.text(p - width / 2, a, str(a), ha="center", va="bottom", fontsize=8)
        ax.text(p + width / 2, b, str(b), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(positions), [r.model for r in rows], fontsize=8)
    ax.set_ylabel("tasks passed")
    ax.set_ylim(0, max([r.tasks for r in rows] + [1]) * 1.15)
    ax.legend(fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def outcome_breakdown(breakdown: dict[str, dict[str, int]]) -> str:
    """Stacked horizontal bars: how each model's first attempts ended."""
    plt = _pyplot()
    models = list(breakdown)
    fig, ax = plt.subplots(figsize=(7.5, 0.6 * len(models) + 1.4))
    left = [0] * len(models)
    for outcome, colour in OUTCOME_COLOURS.items():
        counts = [breakdown[m].get(outcome, 0) for m in models]
        if any(counts):
            ax.barh(models, counts, left=left, color=colour, label=outcome)
            left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.set_xlabel("first attempts")
    ax.invert_yaxis()
    ax.legend(fontsize=7, frameon=False, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def pass_at_k_bars(rows: Sequence[PassAtK]) -> str:
    """pass@k per model and k, first attempt and after repair, with 95% intervals."""
    plt = _pyplot()
    bars = [
        (f"{row.model}\n{stage}\npass@{k}", stage, estimate)
        for row in rows
        for stage, values in (("first", row.first), ("after repair", row.after_repair))
        for k, estimate in values.items()
        if estimate is not None
    ]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(bars) + 2), 3.4))
    for index, (_, stage, estimate) in enumerate(bars):
        below = 100 * (estimate.value - estimate.low)
        above = 100 * (estimate.high - estimate.value)
        colour = "#4c78a8" if stage == "first" else "#59a14f"
        ax.bar(index, 100 * estimate.value, color=colour, yerr=[[below], [above]], capsize=3)
    ax.set_xticks(range(len(bars)), [label for label, _, _ in bars], fontsize=7)
    ax.set_ylabel("%")
    ax.set_ylim(0, 105)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)
