"""Per-keyword wording of schema issues, through the real schemas."""

from __future__ import annotations

from typing import Any

import pytest

from qlab.project import messages
from qlab.project.schemas import validate


def worded(data: Any, schema: str = "case", definition: str | None = "case") -> list[tuple[str, str, bool]]:
    from qlab.project.document import format_path

    found = messages.explain_all(validate(data, schema, definition=definition))
    return sorted((format_path(path), text, key) for path, text, key in found)


CASE = {"id": "c-1", "query": "q"}


def config(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "version": 1,
        "project": "p",
        "collection": {"sources": [{"openapi": "x.yaml"}]},
        "suites": {"s": {"mode": "search", "cases": ["*.yaml"]}},
        "gates": [{"stage": "search", "suites": ["s"]}],
    }
    base.update(extra)
    return base


def test_type() -> None:
    assert worded({**CASE, "tags": "a"}) == [("$.tags", "expected a list, got a string ('a')", False)]
    assert worded({**CASE, "flaky": None}) == [
        ("$.flaky", "expected true or false, got null (an empty value)", False)
    ]
    assert worded({**CASE, "timeout_sec": True}) == [
        ("$.timeout_sec", "expected a number, got true (a boolean)", False)
    ]


def test_required_points_at_the_key() -> None:
    assert worded({"id": "c-1"}) == [("$", "missing required key 'query'", True)]


def test_additional_properties_with_and_without_a_suggestion() -> None:
    assert worded({**CASE, "qurey": "x"}) == [("$.qurey", "unknown key 'qurey'. Did you mean 'query'?", True)]
    [(path, text, key)] = worded({**CASE, "assertions": [{"type": "not_overridden", "zzz": 1}]})
    assert (path, text, key) == ("$.assertions[0].zzz", "unknown key 'zzz'. Allowed keys: type.", True)


def test_enum_with_title_suggestion_and_case_insensitive_match() -> None:
    assert worded({**CASE, "mode": "serach"}) == [
        ("$.mode", "'serach' is not a known mode. Did you mean 'search'?", False)
    ]
    assert worded({**CASE, "mode": "PLAN"}) == [
        ("$.mode", "'PLAN' is not a known mode. Did you mean 'plan'?", False)
    ]
    assert worded({**CASE, "mode": "zzz"}) == [
        ("$.mode", "'zzz' is not a known mode. Known: 'search', 'plan', 'execute'.", False)
    ]


def test_property_names_are_worded_as_unknown_names() -> None:
    data = config(gates=[{"stage": "search", "thresholds": {"top1": ">= 0.8"}}])
    assert worded(data, "config", None) == [
        ("$.gates[0].thresholds.top1", "unknown metric 'top1'. Did you mean 'top_1'?", True)
    ]


def test_bounds_lengths_and_items() -> None:
    assert worded({**CASE, "expected_top_k": 0}) == [("$.expected_top_k", "must be at least 1, got 0", False)]
    assert worded({**CASE, "timeout_sec": 0}) == [("$.timeout_sec", "must be greater than 0, got 0", False)]
    assert worded({**CASE, "query": ""}) == [("$.query", "must not be empty", False)]
    assert worded({**CASE, "assertions": [{"type": "plan_tools_equal", "tools": []}]}) == [
        ("$.assertions[0].tools", "must not be empty", False)
    ]
    assert worded({**CASE, "assertions": [{"type": "http_status", "range": [200]}]}) == [
        ("$.assertions[0].range", "needs at least 2 items, got 1", False)
    ]


def test_const_and_pattern() -> None:
    assert worded(config(version=2), "config", None) == [("$.version", "must be 1, got 2", False)]
    assert worded({**CASE, "id": "has space"}) == [
        ("$.id", "'has space' is not in the expected format: unique id of the case across all suites, e.g. "
                 "search-core-001", False)
    ]  # fmt: skip


def test_discriminated_union_reports_the_chosen_branch_only() -> None:
    assert worded({**CASE, "assertions": [{"type": "top_k_contains", "k": 5}]}) == [
        ("$.assertions[0]", "missing required key 'tool'", True)
    ]
    assert worded({**CASE, "assertions": [{"type": "htp_status", "in": [200]}]}) == [
        ("$.assertions[0].type", "unknown assertion type 'htp_status'. Did you mean 'http_status'?", False)
    ]
    [(_, text, _)] = worded({**CASE, "assertions": [{"type": "zzzzzz"}]})
    assert text.startswith("unknown assertion type 'zzzzzz'. Known: top_k_contains, top_1_is, ")


def test_required_only_branches() -> None:
    step = {"tool": "cancelOrder", "method": "DELETE", "path": "/orders/1"}
    assert worded({**CASE, "cleanup": [step]}) == [
        (
            "$.cleanup[0]",
            "takes only one of 'tool', or 'method' and 'path'; found 'tool', 'method' and 'path'",
            False,
        )
    ]
    assert worded({**CASE, "cleanup": [{"method": "DELETE"}]}) == [
        ("$.cleanup[0]", "missing required key 'path' (it goes with 'method')", True)
    ]


def test_type_fitting_branch_explains_and_bare_names_that_take_a_value() -> None:
    data = config(
        gates=[{"stage": "build", "stop_if": ["schema_coverage_below", {"schema_coverage_below": "x"}]}]
    )
    assert worded(data, "config", None) == [
        ("$.gates[0].stop_if[0]", "'schema_coverage_below' takes a value: write `schema_coverage_below: <number>`",
         False),
        ("$.gates[0].stop_if[1].schema_coverage_below", "expected a number, got a string ('x')", False),
    ]  # fmt: skip
    [(_, text, _)] = worded(config(gates=[{"stage": "build", "stop_if": [7]}]), "config", None)
    assert (
        text
        == "expected a stop condition or a single-key mapping such as `schema_coverage_below: 0.8`, got an integer (7)"
    )


def test_a_type_error_silences_the_rest_at_that_path() -> None:
    # a string where a source object is expected: only the type error, not "needs openapi, swagger, ..."
    data = config(collection={"sources": ["x.yaml"]})
    assert worded(data, "config", None) == [
        ("$.collection.sources[0]", "expected a mapping, got a string ('x.yaml')", False)
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "null (an empty value)"), (True, "true (a boolean)"), (3, "an integer (3)"), (2.5, "a number (2.5)"),
     ("x" * 50, f"a string ('{'x' * 37}...')"), ([1], "a list"), ({}, "a mapping")],
)  # fmt: skip
def test_describe(value: Any, text: str) -> None:
    assert messages.describe(value) == text


def test_suggestion() -> None:
    assert messages.suggestion("serach", ["search", "plan"]) == " Did you mean 'search'?"
    assert messages.suggestion("DELETE", ["delete"]) == " Did you mean 'delete'?"
    assert messages.suggestion("zzz", ["search"]) == ""


def test_diagnostics_are_located_and_unique() -> None:
    from qlab.project.yamlio import parse_yaml

    doc = parse_yaml("id: c-1\nquery: q\nqurey: x\nmode: serach\n", "case.yaml")
    rendered = [d.render() for d in messages.diagnostics(validate(doc.data, "case", definition="case"), doc)]
    assert sorted(rendered) == [
        "case.yaml:3:1: $.qurey: unknown key 'qurey'. Did you mean 'query'?",
        "case.yaml:4:7: $.mode: 'serach' is not a known mode. Did you mean 'search'?",
    ]
