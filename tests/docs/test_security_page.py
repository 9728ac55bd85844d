"""docs/security.md: the threat model's sections are there, and its table of caps is the schema's."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from qlab.contracts.resources import load_schema

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = (DOCS / "security.md").read_text(encoding="utf-8")


def test_the_threat_model_has_its_sections() -> None:
    headings = re.findall(r"^#{2,3} (.+)$", PAGE, re.M)
    for wanted in (
        "What qlab trusts",
        "What qlab does not trust, and what it guarantees",
        "Outside text in what qlab prints and writes",
        "Result artifacts",
        "Running on pull requests from forks",
    ):
        assert wanted in headings, wanted
    assert "(security.md)" in (DOCS / "README.md").read_text(encoding="utf-8")


def test_the_caps_shown_are_the_schemas_with_their_defaults() -> None:
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", PAGE, re.S) if b.startswith("limits:"))
    shown = yaml.safe_load(block)["limits"]
    limits = load_schema("qlab")["properties"]["limits"]["properties"]
    assert shown == {name: spec["default"] for name, spec in limits.items()}
