"""The report format registry."""

from __future__ import annotations

import pytest

import artifact_samples as samples
from qlab import report
from qlab.contracts.errors import UsageError


def test_known_formats_render() -> None:
    assert report.format_for("junit")(samples.result()).startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert report.format_for("markdown")(samples.result()).startswith("## ❌ qlab: BLOCK")


def test_unknown_format_names_the_known_ones() -> None:
    assert report.names() == ("junit", "markdown")
    with pytest.raises(UsageError, match=r"unknown report format 'junt' \(known: junit, markdown\).*'junit'"):
        report.format_for("junt")
