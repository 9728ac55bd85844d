"""Inline SVG charts for the HTML report, written here so the report needs no library, no CDN and no script.

Two shapes cover every chart of the report:

- ``bar_chart``: horizontal bars, one row per label, one bar per series (per-stage latency p50/p95, the
  scorecard, failure classes). A ``None`` value draws no bar and prints "no data" instead of inventing a zero.
- ``line_chart``: lines over a numeric x axis (the hit@K curve, metric trends). ``None`` points break the line.

Every string that reaches the markup goes through ``esc`` (``html.escape`` with quotes), so labels taken from a
result artifact cannot inject markup. Colours are CSS classes (``s0`` .. ``s5``) defined by the page's stylesheet.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

SERIES_CLASSES = ("s0", "s1", "s2", "s3", "s4", "s5")
_CHAR_W = 6.6  # approximate width of one 12px label character, to size the label column


def esc(value: object) -> str:
    """Escape any value for HTML/SVG text or a quoted attribute."""
    return html.escape(str(value), quote=True)


def fmt(value: float | None, *, digits: int = 3) -> str:
    """A short number: integers without decimals, rates with up to ``digits`` decimals, and fewer decimals as the
    magnitude grows (1022.3, not 1022.322)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "no data"
    if float(value).is_integer() and abs(value) >= 1:
        return str(int(value))
    if abs(value) >= 100:
        digits = min(digits, 1)
    elif abs(value) >= 10:
        digits = min(digits, 2)
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") or "0"


def _svg_open(width: float, height: float, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" aria-label="{esc(label)}">'
        f"<title>{esc(label)}</title>"
    )


def _legend(series: Sequence[str], *, x: float, y: float) -> list[str]:
    parts: list[str] = []
    dx = x
    for i, name in enumerate(series):
        cls = SERIES_CLASSES[i % len(SERIES_CLASSES)]
        parts.append(f'<rect class="{cls}" x="{dx:.1f}" y="{y - 9:.1f}" width="10" height="10"/>')
        parts.append(f'<text class="legend" x="{dx + 14:.1f}" y="{y:.1f}">{esc(name)}</text>')
        dx += 14 + _CHAR_W * len(name) + 16  # each entry as wide as its label
    return parts


def bar_chart(
    rows: Sequence[tuple[str, Sequence[float | None]]],
    *,
    series: Sequence[str],
    label: str,
    unit: str = "",
    max_value: float | None = None,
    width: int = 720,
    missing: Mapping[str, str] | None = None,
) -> str:
    """Horizontal grouped bars: ``rows`` is ``[(row label, [value per series]), ...]``.

    ``max_value`` fixes the scale (1.0 for rates); otherwise the largest value sets it. A row without a value
    says "no data", or what ``missing`` gives for its label (``n/a (not reached)``).
    """
    bar_h, gap = 14, 10
    label_w = min(260.0, max([_CHAR_W * len(name) for name, _ in rows] + [60.0]) + 12)
    value_w = 80.0
    plot_w = max(120.0, width - label_w - value_w)
    legend_h = 22 if len(series) > 1 else 0
    group_h = bar_h * max(1, len(series)) + gap
    height = legend_h + group_h * max(1, len(rows)) + 8
    finite = [v for _, values in rows for v in values if v is not None and math.isfinite(v)]
    top = max_value if max_value is not None else max(finite, default=0.0)
    top = top if top > 0 else 1.0
    parts = [_svg_open(width, height, label)]
    if legend_h:
        parts.extend(_legend(series, x=label_w, y=14))
    for r, (name, values) in enumerate(rows):
        y0 = legend_h + r * group_h + 4
        mid = y0 + bar_h * max(1, len(series)) / 2 + 4
        parts.append(
            f'<text class="rowlabel" x="{label_w - 8:.1f}" y="{mid:.1f}" text-anchor="end">{esc(name)}</text>'
        )
        for s, value in enumerate(values):
            y = y0 + s * bar_h
            cls = SERIES_CLASSES[s % len(SERIES_CLASSES)]
            if value is None or not math.isfinite(value):
                said = (missing or {}).get(name, "no data")
                parts.append(
                    f'<text class="nodata" x="{label_w + 4:.1f}" y="{y + bar_h - 3:.1f}">{esc(said)}</text>'
                )
                continue
            w = max(0.0, min(1.0, value / top)) * plot_w
            parts.append(
                f'<rect class="{cls}" x="{label_w:.1f}" y="{y:.1f}" width="{w:.1f}" height="{bar_h - 2}">'
                f"<title>{esc(name)} {esc(series[s] if s < len(series) else '')}: {esc(fmt(value))}{esc(unit)}</title></rect>"
            )
            parts.append(
                f'<text class="value" x="{label_w + w + 4:.1f}" y="{y + bar_h - 3:.1f}">{esc(fmt(value))}{esc(unit)}</text>'
            )
    parts.append(
        f'<line class="axis" x1="{label_w:.1f}" y1="{legend_h:.1f}" x2="{label_w:.1f}" y2="{height - 4:.1f}"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out: list[float] = []
    value = first
    while value <= hi + step * 1e-9:
        out.append(round(value, 10))
        value += step
    return out


def line_chart(
    series: Mapping[str, Sequence[tuple[float, float | None]]],
    *,
    label: str,
    x_label: str,
    y_label: str = "",
    y_max: float | None = 1.0,
    x_tick_labels: Mapping[float, str] | None = None,
    marker_x: float | None = None,
    marker_label: str = "",
    width: int = 720,
    height: int = 280,
) -> str:
    """Lines over x: ``series`` maps a name to ``[(x, y or None), ...]``; ``None`` breaks the line.

    ``x_tick_labels`` replaces numeric x ticks (e.g. run ids for trends); ``marker_x`` draws a dashed
    vertical line (e.g. the configured K).
    """
    left, right, top_pad, bottom = 52.0, 40.0, 30.0, 44.0
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    xs = [x for points in series.values() for x, _ in points]
    ys = [y for points in series.values() for _, y in points if y is not None and math.isfinite(y)]
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_hi = y_max if y_max is not None else max([*ys, 1e-9]) * 1.1
    y_lo = 0.0

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * plot_w

    def py(y: float) -> float:
        return top_pad + plot_h - (min(max(y, y_lo), y_hi) - y_lo) / (y_hi - y_lo) * plot_h

    parts = [_svg_open(width, height, label)]
    parts.extend(_legend(list(series), x=left, y=16))
    for tick in _ticks(y_lo, y_hi, 4):
        y = py(tick)
        parts.append(
            f'<line class="grid" x1="{left:.1f}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}"/>'
        )
        parts.append(
            f'<text class="tick" x="{left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end">{esc(fmt(tick))}</text>'
        )
    x_ticks = (
        sorted(x_tick_labels) if x_tick_labels else _ticks(x_lo, x_hi, min(10, max(1, int(x_hi - x_lo))))
    )
    for tick in x_ticks:
        text = x_tick_labels[tick] if x_tick_labels else fmt(tick)
        x = px(tick)
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{top_pad + plot_h + 16:.1f}" text-anchor="middle">{esc(text)}</text>'
        )
    parts.append(
        f'<text class="axislabel" x="{left + plot_w / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle">{esc(x_label)}</text>'
    )
    if y_label:
        parts.append(
            f'<text class="axislabel" x="12" y="{top_pad + plot_h / 2:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 12 {top_pad + plot_h / 2:.1f})">{esc(y_label)}</text>'
        )
    if marker_x is not None and x_lo <= marker_x <= x_hi:
        x = px(marker_x)
        parts.append(
            f'<line class="marker" x1="{x:.1f}" y1="{top_pad:.1f}" x2="{x:.1f}" y2="{top_pad + plot_h:.1f}"/>'
        )
        # the label sits left of the line when the line is in the right half, so it is never clipped
        anchor, dx = ("end", -4) if x > left + plot_w / 2 else ("start", 4)
        parts.append(
            f'<text class="tick" x="{x + dx:.1f}" y="{top_pad + plot_h - 6:.1f}" text-anchor="{anchor}">{esc(marker_label)}</text>'
        )
    for i, (name, points) in enumerate(series.items()):
        cls = SERIES_CLASSES[i % len(SERIES_CLASSES)]
        segment: list[str] = []
        for xv, yv in [*points, (math.nan, None)]:  # a sentinel flushes the last segment
            if yv is None or not math.isfinite(yv) or not math.isfinite(xv):
                if len(segment) > 1:
                    parts.append(f'<polyline class="line {cls}" points="{" ".join(segment)}"/>')
                segment = []
                continue
            segment.append(f"{px(xv):.1f},{py(yv):.1f}")
            parts.append(
                f'<circle class="{cls}" cx="{px(xv):.1f}" cy="{py(yv):.1f}" r="3">'
                f"<title>{esc(name)} @ {esc(x_tick_labels.get(xv, fmt(xv)) if x_tick_labels else fmt(xv))}: "
                f"{esc(fmt(yv))}</title></circle>"
            )
    parts.append(
        f'<line class="axis" x1="{left:.1f}" y1="{top_pad + plot_h:.1f}" x2="{left + plot_w:.1f}" y2="{top_pad + plot_h:.1f}"/>'
    )
    parts.append("</svg>")
    return "".join(parts)
