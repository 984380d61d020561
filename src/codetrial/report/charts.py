"""Charts drawn directly as inline SVG: bars with 95% intervals, stacked bars, points
and lines. No plotting library, so a report costs milliseconds and rebuilds byte for
byte from the same store."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from codetrial.report.summary import ModelSummary, MonthPass, PassAtK

OUTCOME_COLOURS = {
    "passed": "#59a14f",
    "failed": "#e15759",
    "error": "#ff9da7",
    "timeout": "#b07aa1",
    "memory": "#9c755f",
    "output_limit": "#76b7b2",
    "syntax_error": "#f28e2b",
    "rejected": "#edc948",
    "no_code": "#bab0ac",
    "malformed_edit": "#d4a6c8",
    "infra_error": "#4e79a7",
    "tampered": "#000000",
    "overflow": "#79706e",
    "answered": "#8cd17d",
}
FIRST, REPAIRED, MUTED, BASELINE = "#4c78a8", "#59a14f", "#bab0ac", "#888"
LINE_HEIGHT = 11


def _number(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


class Canvas:
    """An SVG drawing, in pixels from the top left."""

    def __init__(self, width: float, height: float, title: str) -> None:
        self.width, self.height, self.title = width, height, title
        self._parts: list[str] = []

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: int = 10,
        anchor: str = "middle",
        rotate: bool = False,
    ) -> None:
        """Text at (x, y); each line of a multi-line text goes one line lower."""
        turn = f' transform="rotate(-90 {_number(x)} {_number(y)})"' if rotate else ""
        lines = str(text).split("\n")
        spans = "".join(
            f'<tspan x="{_number(x)}" dy="{0 if i == 0 else LINE_HEIGHT}">{escape(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        self._parts.append(
            f'<text x="{_number(x)}" y="{_number(y)}" font-size="{size}" '
            f'text-anchor="{anchor}"{turn}>{spans}</text>'
        )

    def rect(
        self, x: float, y: float, width: float, height: float, colour: str, label: str = ""
    ) -> None:
        tip = f"<title>{escape(label)}</title>" if label else ""
        self._parts.append(
            f'<rect x="{_number(x)}" y="{_number(y)}" width="{_number(max(width, 0))}" '
            f'height="{_number(max(height, 0))}" fill="{colour}">{tip}</rect>'
        )

    def line(
        self,
        points: Sequence[tuple[float, float]],
        colour: str,
        width: float = 1.0,
        dashed: bool = False,
    ) -> None:
        path = " ".join(f"{_number(x)},{_number(y)}" for x, y in points)
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        self._parts.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" '
            f'stroke-width="{width}"{dash}/>'
        )

    def circle(self, x: float, y: float, radius: float, colour: str, label: str = "") -> None:
        tip = f"<title>{escape(label)}</title>" if label else ""
        self._parts.append(
            f'<circle cx="{_number(x)}" cy="{_number(y)}" r="{_number(radius)}" '
            f'fill="{colour}">{tip}</circle>'
        )

    def legend(self, x: float, y: float, items: Sequence[tuple[str, str]]) -> None:
        """Colour swatches with labels in a row starting at (x, y)."""
        for label, colour in items:
            self.rect(x, y - 8, 10, 10, colour)
            self.text(x + 14, y, label, size=9, anchor="start")
            x += 24 + 5.5 * len(label)

    def svg(self) -> str:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_number(self.width)}" '
            f'height="{_number(self.height)}" viewBox="0 0 {_number(self.width)} '
            f'{_number(self.height)}" role="img" font-family="sans-serif" fill="#333">'
            f"<title>{escape(self.title)}</title>{''.join(self._parts)}</svg>"
        )


class Frame:
    """A plot area of a canvas: data coordinates mapped to pixels, with its axes."""

    def __init__(
        self,
        canvas: Canvas,
        box: tuple[float, float, float, float],
        xs: tuple[float, float],
        ys: tuple[float, float],
    ) -> None:
        self.canvas = canvas
        self.left, self.top, self.width, self.height = box
        self.xs, self.ys = xs, ys

    def x(self, value: float) -> float:
        low, high = self.xs
        return self.left + (value - low) / (high - low) * self.width

    def y(self, value: float) -> float:
        low, high = self.ys
        return self.top + self.height - (value - low) / (high - low) * self.height

    def axes(
        self,
        y_label: str,
        x_label: str = "",
        y_ticks: Sequence[float] = (),
        x_ticks: Sequence[float] = (),
    ) -> None:
        """Left and bottom axes, tick labels and axis titles."""
        bottom = self.top + self.height
        self.canvas.line([(self.left, self.top), (self.left, bottom)], BASELINE)
        self.canvas.line([(self.left, bottom), (self.left + self.width, bottom)], BASELINE)
        for tick in y_ticks:
            self.canvas.line([(self.left - 4, self.y(tick)), (self.left, self.y(tick))], BASELINE)
            self.canvas.text(self.left - 6, self.y(tick) + 3, _number(tick), 9, "end")
        for tick in x_ticks:
            self.canvas.line([(self.x(tick), bottom), (self.x(tick), bottom + 4)], BASELINE)
            self.canvas.text(self.x(tick), bottom + 14, _number(tick), 9)
        self.canvas.text(self.left - 34, self.top + self.height / 2, y_label, 10, rotate=True)
        if x_label:
            self.canvas.text(self.left + self.width / 2, bottom + 30, x_label, 10)

    def labels(self, names: Sequence[str]) -> None:
        """Category names under bars 0, 1, ...; a name may have several lines."""
        for index, name in enumerate(names):
            self.canvas.text(self.x(index), self.top + self.height + 13, name, 9)

    def bar(
        self,
        index: float,
        span: float,
        value: float,
        colour: str,
        interval: tuple[float, float] | None = None,
        label: str = "",
    ) -> None:
        """A bar centred on `index`, `span` wide in data units, with its interval."""
        left, right = self.x(index - span / 2), self.x(index + span / 2)
        self.canvas.rect(
            left,
            self.y(value),
            right - left,
            self.y(self.ys[0]) - self.y(value),
            colour,
            label or _number(value),
        )
        if interval is not None:
            low, high = interval
            middle, cap = self.x(index), min(4.0, (right - left) / 3)
            self.canvas.line([(middle, self.y(low)), (middle, self.y(high))], "#222")
            for end in (low, high):
                self.canvas.line([(middle - cap, self.y(end)), (middle + cap, self.y(end))], "#222")


def _ticks(top: float, count: int = 5) -> list[float]:
    step = 10 ** math.floor(math.log10(max(top, 1) / count))
    for factor in (1, 2, 5, 10):
        if top / (step * factor) <= count:
            step *= factor
            break
    return [step * i for i in range(int(top // step) + 1)]


def _bar_canvas(
    count: int, per_bar: float, top: float, title: str, label_lines: int = 1
) -> tuple[Canvas, Frame]:
    """A canvas sized for `count` bars from 0 to `top`, labels of `label_lines` lines."""
    extra = LINE_HEIGHT * (label_lines - 1)
    width = max(320.0, per_bar * count + 90)
    canvas = Canvas(width, 240.0 + extra, title)
    return canvas, Frame(canvas, (60.0, 14.0, width - 75, 190.0), (-0.5, count - 0.5), (0.0, top))


def first_vs_repaired(rows: Sequence[ModelSummary]) -> str:
    """Grouped bars: tasks passed on the first attempt and after repair, per model."""
    top = max([r.tasks for r in rows] + [1]) * 1.15
    canvas, frame = _bar_canvas(len(rows), 110, top, "tasks passed, first and after repair")
    frame.axes("tasks passed", y_ticks=_ticks(top))
    for index, row in enumerate(rows):
        for shift, value, colour in (
            (-0.2, row.first_pass, FIRST),
            (0.2, row.after_repair, REPAIRED),
        ):
            frame.bar(index + shift, 0.38, value, colour)
            canvas.text(frame.x(index + shift), frame.y(value) - 3, str(value), 8)
    frame.labels([r.model for r in rows])
    canvas.legend(frame.left + 10, 12, [("first attempt", FIRST), ("after repair", REPAIRED)])
    return canvas.svg()


def outcome_breakdown(breakdown: dict[str, dict[str, int]]) -> str:
    """Stacked horizontal bars: how each model's first attempts ended."""
    models = list(breakdown)
    used = [o for o in OUTCOME_COLOURS if any(breakdown[m].get(o, 0) for m in models)]
    total = max([sum(breakdown[m].values()) for m in models] + [1])
    height = 34.0 * len(models) + 90
    canvas = Canvas(640, height, "how first attempts ended")
    names = max([len(m) for m in models] + [8])
    left = min(240.0, 12 + 6 * names)
    frame = Frame(canvas, (left, 10, 610 - left, 34 * len(models)), (0, total), (0, 1))
    for row, model in enumerate(models):
        start = 0
        for outcome in used:
            count = breakdown[model].get(outcome, 0)
            x0, x1 = frame.x(start), frame.x(start + count)
            canvas.rect(
                x0,
                14 + 34 * row,
                x1 - x0,
                24,
                OUTCOME_COLOURS[outcome],
                f"{model}: {outcome} {count}",
            )
            start += count
        canvas.text(left - 6, 30 + 34 * row, model, 9, "end")
    bottom = 14 + 34 * len(models)
    canvas.line([(left, bottom), (610, bottom)], BASELINE)
    for tick in _ticks(total):
        canvas.text(frame.x(tick), bottom + 13, _number(tick), 9)
    canvas.text(left + frame.width / 2, bottom + 28, "first attempts", 10)
    canvas.legend(left, bottom + 50, [(o, OUTCOME_COLOURS[o]) for o in used[:6]])
    if used[6:]:
        canvas.legend(left, bottom + 66, [(o, OUTCOME_COLOURS[o]) for o in used[6:]])
    return canvas.svg()


def pass_at_k_bars(rows: Sequence[PassAtK]) -> str:
    """pass@k per model and k, first attempt and after repair, with 95% intervals."""
    bars = [
        (f"{row.model}\n{stage}\npass@{k}", stage, estimate)
        for row in rows
        for stage, values in (("first", row.first), ("after repair", row.after_repair))
        for k, estimate in values.items()
        if estimate is not None
    ]
    canvas, frame = _bar_canvas(len(bars), 56, 105.0, "pass@k with 95% intervals", 3)
    frame.axes("%", y_ticks=range(0, 101, 20))
    for index, (_, stage, estimate) in enumerate(bars):
        frame.bar(
            index,
            0.7,
            100 * estimate.value,
            FIRST if stage == "first" else REPAIRED,
            (100 * estimate.low, 100 * estimate.high),
        )
    frame.labels([label for label, _, _ in bars])
    return canvas.svg()


def release_month_bars(rows: Sequence[MonthPass]) -> str:
    """First-attempt pass@1 per month of release (and model, when there are several),
    with 95% intervals: LiveCodeBench's picture of contamination."""
    several = len({row.model for row in rows}) > 1
    bars = [
        (f"{row.month}\n{row.model}" if several else row.month, row.first)
        for row in sorted(rows, key=lambda row: (row.month, row.model))
        if row.first is not None
    ]
    canvas, frame = _bar_canvas(
        len(bars), 48, 105.0, "pass@1 by month of release, with 95% intervals", 2 if several else 1
    )
    frame.axes("pass@1 (%)", y_ticks=range(0, 101, 20))
    for index, (_, estimate) in enumerate(bars):
        frame.bar(
            index, 0.7, 100 * estimate.value, FIRST, (100 * estimate.low, 100 * estimate.high)
        )
    frame.labels([label for label, _ in bars])
    return canvas.svg()


def strategy_bars(strategies: Sequence[dict[str, Any]]) -> str:
    """Selected pass@1 per strategy with its 95% interval; random and first dashed."""
    canvas, frame = _bar_canvas(len(strategies), 70, 110.0, "selected pass@1 by strategy")
    frame.axes("selected pass@1 (%)", y_ticks=range(0, 101, 20))
    for index, row in enumerate(strategies):
        estimate = row["estimate"]
        value = 100 * estimate["value"]
        colour = MUTED if row["name"] in ("random", "first", "oracle") else FIRST
        frame.bar(
            index,
            0.7,
            value,
            colour,
            (100 * estimate["low"], 100 * estimate["high"]),
            f"{row['name']}: {value:.1f} %",
        )
        canvas.text(frame.x(index), frame.y(100 * estimate["high"]) - 3, f"{value:.1f}", 8)
        if row["name"] in ("random", "first"):
            canvas.line(
                [(frame.left, frame.y(value)), (frame.left + frame.width, frame.y(value))],
                BASELINE,
                0.8,
                dashed=True,
            )
    frame.labels([row["name"] for row in strategies])
    return canvas.svg()


def judge_chart(setting: dict[str, Any]) -> str:
    """Left: reliability (P(yes) against the share actually correct). Right: error
    rates and abstention by confidence threshold."""
    canvas = Canvas(720, 270, "judge reliability and error rates by threshold")
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    left = Frame(canvas, (60, 14, 250, 200), (0, 1), (0, 1))
    left.axes("share correct by the tests", "judge P(yes)", ticks, ticks)
    canvas.line([(left.x(0), left.y(0)), (left.x(1), left.y(1))], MUTED, dashed=True)
    for b in setting["calibration"]:
        if b["count"]:
            tip = f"{b['count']} candidates, {100 * b['correct_share']:.0f} % correct"
            radius = 2 + math.sqrt(b["count"]) / 2
            canvas.circle(
                left.x(b["mean_confidence"]), left.y(b["correct_share"]), radius, FIRST, tip
            )
    rows = setting["thresholds"]
    thresholds = [r["threshold"] for r in rows]
    low = min([*thresholds, 0.5])
    right = Frame(canvas, (420, 14, 250, 200), (low, 1.0), (0, 1))
    right.axes("rate", "confidence threshold", ticks, [t for t in ticks if t >= low])
    series = (
        ("false positives", "false_positive_rate", "#e15759"),
        ("false negatives", "false_negative_rate", "#f28e2b"),
        ("abstained", "abstained", MUTED),
    )
    for label, key, colour in series:
        points = [(right.x(r["threshold"]), right.y(r[key])) for r in rows if r[key] is not None]
        if points:
            canvas.line(points, colour, 1.5)
        for x, y in points:
            canvas.circle(x, y, 2.5, colour, label)
    canvas.legend(420, 262, [(label, colour) for label, _, colour in series])
    return canvas.svg()


def size_vs_score(suite: str, points: Sequence[tuple[str, float | None, Any]]) -> str:
    """pass@1 with its interval against parameters on a log axis, as leaderboards draw
    it: (label, parameters or None, Estimate) per row; rows of unknown size are named
    under the chart instead."""
    placed = [(label, size, estimate) for label, size, estimate in points if size]
    unplaced = [label for label, size, _ in points if not size]
    canvas = Canvas(640, 330 + LINE_HEIGHT * len(unplaced), f"{suite}: pass@1 by model size")
    if placed:
        low = math.floor(math.log10(min(size for _, size, _ in placed)) - 0.2)
        high = math.ceil(math.log10(max(size for _, size, _ in placed)) + 0.2)
        frame = Frame(canvas, (60, 20, 540, 250), (low, high), (0, 1))
        frame.axes("pass@1", "parameters (log scale)", [0, 0.25, 0.5, 0.75, 1])
        bottom = frame.top + frame.height
        for exponent in range(low, high + 1):
            x = frame.x(exponent)
            canvas.line([(x, bottom), (x, bottom + 4)], BASELINE)
            canvas.text(x, bottom + 14, shown_size(10.0**exponent), 9)
        for label, size, estimate in placed:
            x = frame.x(math.log10(size))
            canvas.line([(x, frame.y(estimate.low)), (x, frame.y(estimate.high))], "#222")
            canvas.circle(x, frame.y(estimate.value), 4, FIRST, f"{label}: {estimate}")
            canvas.text(x + 7, frame.y(estimate.value) - 6, label, 9, "start")
    else:
        canvas.text(320, 150, "no model here has a known size (give one with --size)", 11)
    for index, label in enumerate(unplaced):
        canvas.text(60, 320 + LINE_HEIGHT * index, f"size unknown: {label}", 9, "start")
    return canvas.svg()


def shown_size(parameters: float) -> str:
    """A parameter count as leaderboards write it: 494M, 1.5B."""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if parameters >= scale:
            return f"{parameters / scale:.3g}{unit}"
    return f"{parameters:.0f}"
