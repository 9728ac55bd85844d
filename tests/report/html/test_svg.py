from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from qlab.report.html.svg import bar_chart, fmt, line_chart

SVG = "{http://www.w3.org/2000/svg}"


def test_bar_chart_is_well_formed_svg_with_one_bar_per_value_and_no_data_for_none() -> None:
    svg = bar_chart(
        [("search", [12.0, 30.0]), ("plan", [None, 120.0])],
        series=["p50", "p95"],
        label="latency",
        unit=" ms",
    )
    root = ET.fromstring(svg)
    bars = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(bars) == 3
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "no data" in texts
    assert "120 ms" in texts
    widths = sorted(float(b.get("width", "0")) for b in bars)
    assert widths[-1] > widths[0] * 3  # the 120 ms bar is the longest, scaled to the largest value


def test_bar_chart_scales_rates_to_max_value() -> None:
    root = ET.fromstring(bar_chart([("a", [0.5])], series=["score"], label="x", max_value=1.0, width=720))
    bar = next(r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None)
    half = float(bar.get("width", "0"))
    full = float(
        next(
            r
            for r in ET.fromstring(
                bar_chart([("a", [1.0])], series=["score"], label="x", max_value=1.0)
            ).iter(f"{SVG}rect")
        ).get("width", "0")
    )
    assert half == pytest.approx(full / 2, abs=0.2)


def test_line_chart_breaks_lines_at_none_and_escapes_labels() -> None:
    svg = line_chart(
        {"<b>evil</b>": [(1.0, 0.2), (2.0, 0.4), (3.0, None), (4.0, 0.8), (5.0, 0.9)]}, label="t", x_label="K"
    )
    root = ET.fromstring(svg)
    assert len(list(root.iter(f"{SVG}polyline"))) == 2  # the gap at x=3 splits the line
    assert len(list(root.iter(f"{SVG}circle"))) == 4
    assert "<b>" not in svg
    assert "&lt;b&gt;evil&lt;/b&gt;" in svg


def test_line_chart_uses_tick_labels_and_marker() -> None:
    svg = line_chart(
        {"m": [(1.0, 0.5), (2.0, 0.6)]},
        label="t",
        x_label="run",
        x_tick_labels={1.0: "#1", 2.0: "#2"},
        marker_x=2.0,
        marker_label="K=2",
    )
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "#1" in texts and "#2" in texts and "K=2" in texts
    assert root.find(f"{SVG}line[@class='marker']") is not None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "no data"),
        (1.0, "1"),
        (0.5, "0.5"),
        (0.33333, "0.333"),
        (0.0, "0"),
        (120.0, "120"),
        (1022.322, "1022.3"),
        (10.952, "10.95"),
    ],
)
def test_fmt(value: float | None, expected: str) -> None:
    assert fmt(value) == expected
