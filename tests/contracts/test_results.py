"""Per-case results: how a case's search rows (``SearchRow``) become JSON and come back, and what a result holds."""

from __future__ import annotations

import json
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest

from qlab.contracts.results import json_form, json_or_text, read_rows, to_json
from qlab.engine.types import SearchRow

ROW = SearchRow(
    "getThing",
    1,
    2.123456789,
    MappingProxyType({"summary": 1.000049, "path": 0.5}),
    ("thing",),
    {"thnig": "thing"},
)


def test_a_row_is_written_as_its_json_object_with_scores_to_four_places() -> None:
    assert json.loads(json.dumps({"rows": (ROW,)}, default=to_json)) == {
        "rows": [
            {
                "tool_id": "getThing",
                "rank": 1,
                "score": 2.1235,
                "field_scores": {"summary": 1.0, "path": 0.5},
                "matched_terms": ["thing"],
                "corrections": {"thnig": "thing"},
            }
        ]
    }
    with pytest.raises(TypeError, match="object is not JSON data"):
        json.dumps({"x": object()}, default=to_json)


def test_a_report_writer_shows_a_row_as_its_json_and_any_other_odd_value_as_its_text() -> None:
    """Rule: the writers that never fail on a value JSON has no type for (the HTML report, ``qlab promote --json``,
    JUnit's failure text) write a search row as its JSON object, never as its Python repr."""
    from datetime import date

    from qlab.report.html.base import show

    text = json.dumps({"rows": [ROW], "on": date(2026, 1, 2)}, default=json_or_text)
    assert json.loads(text) == {"rows": [ROW.to_dict()], "on": "2026-01-02"}
    assert "SearchRow" not in str(show({"hit": True, "rows": (ROW,)}))


def test_a_stage_object_in_its_json_form_holds_its_rows_as_dicts_and_the_object_is_left_alone() -> None:
    search = {"hit": True, "rows": (ROW,)}
    assert json_form(search) == {"hit": True, "rows": [ROW.to_dict()]}
    assert search["rows"] == (ROW,)
    assert json_form({"hit": False, "rows": ()}) == {"hit": False, "rows": []}
    other = {"rows": [{"case_id": "c"}]}  # not search rows (the learn stage's shadow rows)
    assert json_form(other) is other and json_form("text") == "text"


def test_rows_read_back_are_search_rows_equal_to_what_was_written() -> None:
    """The edge back in: a result read from JSON holds its rows as a run does (``SearchRow``), and writing it
    again gives the same JSON."""
    written = json.loads(
        json.dumps([{"case_id": "c", "search": {"hit": True, "rows": [ROW]}}], default=to_json)
    )
    read_rows(written)
    (row,) = written[0]["search"]["rows"]
    assert type(row) is SearchRow and row.tool_id == "getThing" and row.corrections == {"thnig": "thing"}
    assert row.to_dict() == ROW.to_dict()
    bare = [{"case_id": "d", "search": {"rows": [{"tool_id": "x", "rank": 2}]}}, {"case_id": "e"}]
    read_rows(bare)  # the optional parts of a row (result.schema.json) default
    assert bare[0]["search"]["rows"] == (SearchRow("x", 2, 0.0),)


def test_a_record_writes_latencies_to_three_places_and_leaves_the_result_alone() -> None:
    from qlab.contracts.results import CaseResult

    raw = CaseResult("c", "s", "search", latency_ms={"search": 0.12345, "select": 1.5})
    written = raw.to_dict()["latency_ms"]
    assert written == {"search": 0.123, "select": 1.5} and written is not raw.latency_ms
    assert raw.latency_ms == {"search": 0.12345, "select": 1.5}


def test_the_stages_record_latencies_as_the_artifact_writes_them() -> None:
    """Rule: an engine call records its latency rounded to 3 places, as the artifact writes it."""
    from qlab.contracts.results import CaseResult
    from qlab.stages.engine_calls import call

    result = CaseResult("c", "s", "search")
    ctx: Any = SimpleNamespace(engine=None)
    assert call(result, "search", "search", ctx, lambda: 42) == 42
    assert call(result, "select", "target_selection", ctx, lambda: 1 / 0) is None
    for value in result.latency_ms.values():
        assert round(value, 3) == value


def test_a_result_without_assertions_holds_no_list_of_its_own() -> None:
    """Rule: a case without assertions shares the empty tuple (no list per result); a stage adding its assertion
    results gives the result a new list, never touching another result's."""
    from qlab.contracts.results import AssertionResult, CaseResult

    first, second = CaseResult("a", "s", "search"), CaseResult("b", "s", "search")
    assert first.assertions == () and first.assertions is second.assertions
    from qlab.engine.types import SearchResult
    from qlab.project.model import Assertion
    from qlab.stages.engine_checks import check_search

    case: Any = SimpleNamespace(assertions=(Assertion("top_1_is", {"tool": "getOrder"}),))
    check_search(case, first, SearchResult(rows=()))
    assert len(first.assertions) == 1 and isinstance(first.assertions[0], AssertionResult)
    assert second.assertions == ()
