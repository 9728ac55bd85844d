"""Entities bind to parameters by exact, normalized, alias or fuzzy name, each type-checked."""

from __future__ import annotations

from typing import Any

import pytest

from qlab.collection.model import Parameter
from qlab.engine.matching import check_value, match_entities, name_match

from .helpers import param, tool


@pytest.mark.parametrize(
    ("entity", "parameter", "kind"),
    [
        ("memberNo", param("memberNo"), "exact"),
        ("member_no", param("memberNo"), "normalized"),
        ("Member-No", param("memberNo"), "normalized"),
        ("member_number", param("memberNo"), "alias"),  # "no" is a common abbreviation of "number"
        (
            "customer",
            Parameter("memberNo", "path", True, {"type": "string", "x-aliases": ["customer"]}),
            "alias",
        ),
        ("membrNo", param("memberNo"), "fuzzy"),
    ],
)
def test_name_match_kinds(entity: str, parameter: Parameter, kind: str) -> None:
    found = name_match(entity, parameter)
    assert found is not None and found[0] == kind


def test_unrelated_names_do_not_match() -> None:
    assert name_match("orderId", param("memberNo")) is None
    assert name_match("date", param("deliveryId")) is None


@pytest.mark.parametrize(
    ("value", "schema", "fits", "coerced"),
    [
        ("M-1", {"type": "string"}, True, "M-1"),
        (42, {"type": "string"}, True, "42"),
        (True, {"type": "string"}, False, True),
        (7, {"type": "integer"}, True, 7),
        ("12", {"type": "integer"}, True, 12),
        (3.0, {"type": "integer"}, True, 3),
        ("twelve", {"type": "integer"}, False, "twelve"),
        (True, {"type": "integer"}, False, True),
        ("2.5", {"type": "number"}, True, 2.5),
        (1, {"type": "number"}, True, 1),
        ("true", {"type": "boolean"}, True, True),
        ("yes", {"type": "boolean"}, False, "yes"),
        ("plus", {"type": "string", "enum": ["basic", "plus"]}, True, "plus"),
        ("gold", {"type": "string", "enum": ["basic", "plus"]}, False, "gold"),
        (["a", 1], {"type": "array", "items": {"type": "string"}}, True, ["a", "1"]),
        ("SKU-1", {"type": "array", "items": {"type": "string"}}, True, ["SKU-1"]),
        ([True], {"type": "array", "items": {"type": "integer"}}, False, [True]),
        ({"a": 1}, {"type": "object"}, True, {"a": 1}),
        ("x", {"type": "object"}, False, "x"),
        (None, {"type": "string"}, False, None),
        (None, {"type": "string", "nullable": True}, True, None),
        ("x", {}, True, "x"),
        (5, {"oneOf": [{"type": "string"}, {"type": "integer"}]}, True, "5"),
        (5, {"type": ["integer", "null"]}, True, 5),
    ],
)
def test_check_value(value: Any, schema: dict[str, Any], fits: bool, coerced: Any) -> None:
    ok, got, note = check_value(value, schema)
    assert ok is fits
    assert got == coerced
    if not fits:
        assert note


def test_match_entities_binds_best_kind_first_and_each_entity_once() -> None:
    detail = tool(
        "d", params=(param("memberNo"), param("deliveryId"), param("limit", required=False, type="integer"))
    )
    bound, problems = match_entities(detail, {"member_no": "M-1", "memberNo": "M-2", "deliveryId": "D-1"})
    assert bound["memberNo"].entity == "memberNo" and bound["memberNo"].kind == "exact"
    assert bound["deliveryId"].value == "D-1"
    assert "limit" not in bound
    assert problems == []


def test_a_value_that_does_not_fit_is_a_problem_not_a_binding() -> None:
    t = tool("t", params=(param("limit", type="integer"),))
    bound, problems = match_entities(t, {"limit": "many"})
    assert bound == {}
    assert [(p.parameter, p.entity, p.kind) for p in problems] == [("limit", "limit", "exact")]
    assert "expected an integer" in problems[0].message


def test_coercions_are_noted() -> None:
    t = tool("t", params=(param("limit", type="integer"),))
    bound, _ = match_entities(t, {"limit": "5"})
    assert bound["limit"].value == 5
    assert bound["limit"].note == "coerced '5' to 5"
