"""The self-contained HTML report: one page (``page``) built from sections, charts, the baseline comparison
and case details, with inline CSS and SVG only (nothing is fetched)."""

from __future__ import annotations

from qlab.report.html.page import render_html

__all__ = ["render_html"]
