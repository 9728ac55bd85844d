"""The hand-written guides stay true to what they describe: the action's inputs and outputs, links, code blocks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.S)


def test_the_guides_exist() -> None:
    names = {p.name for p in PAGES}
    assert {"github-actions.md", "comparison.md", "report.md", "README.md"} <= names


def test_github_actions_guide_documents_every_input_and_output() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    page = (DOCS / "github-actions.md").read_text(encoding="utf-8")
    for name in [*action["inputs"], *action["outputs"]]:
        assert f"`{name}`" in page, f"docs/github-actions.md does not mention `{name}`"


def test_github_actions_guide_links_every_example_workflow() -> None:
    page = (DOCS / "github-actions.md").read_text(encoding="utf-8")
    for example in sorted((ROOT / "examples" / "workflows").glob("*.yml")):
        assert f"(../examples/workflows/{example.name})" in page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        assert (page.parent / target).exists(), f"{page.name}: broken link {target}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_yaml_blocks_parse(page: Path) -> None:
    for lang, body in FENCE.findall(page.read_text(encoding="utf-8")):
        if lang == "yaml":
            yaml.safe_load(body)


def test_comparison_is_a_side_by_side_with_the_three_peers_and_says_what_they_do_better() -> None:
    page = (DOCS / "comparison.md").read_text(encoding="utf-8")
    header = next(line for line in page.splitlines() if line.startswith("| | qlab |"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "",
        "qlab",
        "promptfoo",
        "schemathesis",
        "Step CI",
    ]
    better = page.split("## What they do better than qlab", 1)[1].split("\n## ", 1)[0]
    for peer in ("**promptfoo**", "**schemathesis**", "**Step CI**"):
        assert peer in better
    rows = [line for line in page.splitlines() if line.startswith("| **")]
    assert all(line.count("|") == 6 for line in rows), "every comparison row has a cell per tool"
