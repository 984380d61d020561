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


def strategy_bars(strategies: Sequence[dict[str, Any]]) -> str:
    """Selected pass@1 per strategy with its 95% interval; random and first dashed."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.5, 0.8 * len(strategies) + 2), 3.4))
    for index, row in enumerate(strategies):
        estimate = row["estimate"]
        below = 100 * (estimate["value"] - estimate["low"])
        above = 100 * (estimate["high"] - estimate["value"])
        colour = "#bab0ac" if row["name"] in ("random", "first", "oracle") else "#4c78a8"
        ax.bar(index, 100 * estimate["value"], color=colour, yerr=[[below], [above]], capsize=3)
        ax.text(index, 100 * estimate["high"] + 1, f"{100 * estimate['value']:.1f}",
                ha="center", va="bottom", fontsize=7)  # fmt: skip
        if row["name"] in ("random", "first"):
            ax.axhline(100 * estimate["value"], color="#888", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(strategies)), [row["name"] for row in strategies], fontsize=8)
    ax.set_ylabel("selected pass@1 (%)")
    ax.set_ylim(0, 110)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def judge_chart(setting: dict[str, Any]) -> str:
    """Left: reliability (P(yes) against the share actually correct). Right: error
    rates and abstention by confidence threshold."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.5, 3.4))
    bins = [b for b in setting["calibration"] if b["count"]]
    left.plot([0, 1], [0, 1], color="#bbb", linestyle="--", linewidth=0.8)
    left.scatter(
        [b["mean_confidence"] for b in bins], [b["correct_share"] for b in bins],
        s=[12 + 4 * b["count"] ** 0.5 for b in bins], color="#4c78a8",
    )  # fmt: skip
    left.set_xlabel("judge P(yes)")
    left.set_ylabel("share correct by the tests")
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    rows = setting["thresholds"]
    thresholds = [r["threshold"] for r in rows]
    for key, label, colour in (
        ("false_positive_rate", "false positives", "#e15759"),
        ("false_negative_rate", "false negatives", "#f28e2b"),
        ("abstained", "abstained", "#bab0ac"),
    ):
        values = [r[key] if r[key] is not None else float("nan") for r in rows]
        right.plot(thresholds, values, marker="o", label=label, color=colour)
    right.set_xlabel("confidence threshold")
    right.set_ylim(0, 1)
    right.legend(fontsize=7, frameon=False)
    for axis in (left, right):
        axis.spines[["top", "right"]].set_visible(False)
    return _svg(fig)
