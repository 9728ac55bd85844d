"""Governance on artifacts written by the real runner (fake stages): the shapes match end to end."""

from __future__ import annotations

from pathlib import Path

from qlab.governance.promotion.compare import compare
from qlab.governance.promotion.report import markdown
from qlab.governance.records import load_artifact
from qlab.project.model import PromotionRule
from qlab.run.artifact import write
from qlab.run.categories import by_category
from qlab.run.runner import run
from qlab.run.scorecard import DIMENSIONS
from run import fakes as f


def _run(tmp_path: Path, name: str, s1: str, s2: str) -> Path:
    cases = (
        f.case("s1", "search_core", "search", s1, line=1),
        f.case("s2", "search_core", "search", s2, line=5),
    )
    project = f.FakeProject(f.config(tmp_path), cases)
    artifact = run(project, options=f.options(tmp_path)).artifact
    return write(tmp_path / f"{name}.json", artifact)


def test_promotion_reads_what_the_runner_writes(tmp_path: Path) -> None:
    base = load_artifact(_run(tmp_path, "base", "absent:getThing", "getThing"))
    cand = load_artifact(_run(tmp_path, "cand", "getThing", "absent:getThing"))
    rule = PromotionRule("alias_or_semantic_metadata", require=("metric_not_worse",), metrics=("hit_at_k",))
    report = compare(base, cand, change_type="alias_or_semantic_metadata", rule=rule)
    assert report.verdict == "block"  # s2 is in a required suite
    assert [c.case_id for c in report.of_kind("fixed")] == ["s1"]
    assert [c.case_id for c in report.of_kind("regressed")] == ["s2"]
    assert "| search | hit at rank 1 of top 5 | miss of top 5 |" in markdown(report)


def test_the_runner_embeds_the_scorecard_and_the_categories(tmp_path: Path) -> None:
    data = load_artifact(_run(tmp_path, "r", "getThing", "absent:getThing")).data
    assert list(data["scorecard"]) == list(DIMENSIONS)
    assert data["scorecard"]["correctness"] == 0.5
    assert data["categories"] == by_category(data)
