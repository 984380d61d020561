"""Charts rendered offline with matplotlib, returned as inline SVG text."""

from __future__ import annotations

import io
from collections.abc import Sequence

from codetrial.report.summary import ModelSummary


def first_vs_repaired(rows: Sequence[ModelSummary]) -> str:
    """Grouped bars: tasks passed on the first attempt and after repair, per model."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "codetrial"
    from matplotlib import pyplot as plt

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
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]
