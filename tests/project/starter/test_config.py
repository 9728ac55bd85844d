"""Thresholds at the measured figures, rounded down finer than one case: the figure passes, one case less fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection.model import Tool
from qlab.project import load_project
from qlab.project.scaffold import schema_files, write_files
from qlab.project.starter.cases import search_cases
from qlab.project.starter.config import config_text, floor_text, places_for
from qlab.project.starter.model import Figures, Measured, Starter


@pytest.mark.parametrize("cases", [1, 7, 19, 78, 100, 101, 999, 1223, 20000, 2_000_000])
@pytest.mark.parametrize("spread", [1, 30])
def test_the_threshold_holds_at_the_figure_and_breaks_one_case_lower(cases: int, spread: int) -> None:
    places = places_for(cases, spread=spread)
    for hits in {0, 1, cases // 3, cases - 1, cases}:
        value = round(hits / cases, 6)  # as qlab.metrics reports a rate
        threshold = float(floor_text(value, places))
        assert threshold <= value
        if hits and places < 6:  # 6 places is where qlab rounds: finer is not representable
            assert round((hits - 1) / cases, 6) < threshold, (cases, hits, threshold)


def test_floor_text_rounds_down_and_stays_short() -> None:
    assert floor_text(0.947368, 2) == "0.94"
    assert floor_text(0.29, 2) == "0.29"  # 0.29 * 100 is 28.999… in binary: Decimal keeps it exact
    assert floor_text(1.0, 4) == "1.0" and floor_text(0.0, 2) == "0.0"
    assert floor_text(0.906, 4) == "0.906"


def _tools() -> tuple[Tool, ...]:
    return (
        Tool(
            "listPets", "listPets", "pets", "api", "openapi", summary="List pets.", method="GET", path="/pets"
        ),
        Tool("addPet", "addPet", "pets", "api", "openapi", summary="Add a pet.", method="POST", path="/pets"),
    )


def test_the_measured_config_validates_and_says_what_was_measured(tmp_path: Path) -> None:
    starter = Starter(project="pets", kind="openapi", source="specs/openapi.yaml", spec_label="openapi.yaml",
                      tools=_tools(), base_url="http://127.0.0.1:9")  # fmt: skip
    figures = Figures(
        schema_coverage=0.61234,
        search=Measured({"hit_at_k": 1.0, "top_1": 0.5, "mrr": 0.75}, cases=2),
        execute=None,
        execute_note="Not gated: --offline, no request was sent.",
    )
    text = config_text(starter, profiles=[], auth=None, reads=True, figures=figures, execute_gated=False,
                       execute_note=figures.execute_note)  # fmt: skip
    assert "      - schema_coverage_below: 0.6123  # measured 0.61234 at init; raise me\n" in text
    assert '      hit_at_k: ">= 1.0"  # measured 1.0 at init; keep it\n' in text
    assert '      top_1: ">= 0.5"  # measured 0.5 at init; raise me\n' in text
    assert "  # Not gated: --offline, no request was sent.\n  # - name: execute\n" in text
    assert "base_url: ${PETS_BASE_URL:-http://127.0.0.1:9}" in text
    (tmp_path / "specs").mkdir()
    spec = (
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    get: {operationId: listPets}\n"
    )
    (tmp_path / "specs" / "openapi.yaml").write_text(spec)
    (tmp_path / "gates" / "execute_read").mkdir(parents=True)
    (tmp_path / "gates" / "execute_read" / "reads.yaml").write_text("- {id: r1, query: List pets.}\n")
    write_files(tmp_path, {"qlab.yaml": text.encode(), "gates/aliases.yaml": b"{}\n", **schema_files(),
                           "gates/search_core/operations.yaml": search_cases(_tools(), spec_label="x").encode()},
                force=False)  # fmt: skip
    project = load_project(tmp_path / "qlab.yaml")
    search = next(g for g in project.config.gates if g.name == "search")
    assert [(t.metric, t.value) for t in search.thresholds] == [
        ("hit_at_k", 1.0),
        ("top_1", 0.5),
        ("mrr", 0.75),
    ]
