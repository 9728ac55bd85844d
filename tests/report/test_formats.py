"""The report format registry."""

from __future__ import annotations

import pytest

import artifact_samples as samples
from qlab import report
from qlab.errors import QlabError, UsageError


def test_known_formats_render() -> None:
    assert report.format_for("junit")(samples.result()).startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert report.format_for("markdown")(samples.result()).startswith("## ❌ qlab: BLOCK")


def test_unknown_and_duplicate() -> None:
    with pytest.raises(UsageError, match="unknown report format 'pdf'"):
        report.format_for("pdf")
    with pytest.raises(QlabError, match="already registered"):
        report.register("junit", "x:y")
