"""The engine objects as JSON: round trips, and agreement with the documented JSON Schemas."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from qlab.contracts.errors import InputError
from qlab.contracts.resources import load_schema
from qlab.engine import wire
from qlab.engine.builtin import BuiltinEngine
from qlab.project.schemas import validate

from .helpers import demo_collection

ENGINE = BuiltinEngine(demo_collection())
QUERY = "Find the member delivery detail"


def test_the_schemas_are_valid_draft_07() -> None:
    jsonschema.Draft7Validator.check_schema(load_schema("engine-request"))  # raises SchemaError on a bad one
    jsonschema.Draft7Validator.check_schema(load_schema("engine-response"))


def test_round_trips_and_schema_validity() -> None:
    found = ENGINE.search(QUERY, k=5)
    selection = ENGINE.select(
        QUERY, found, entities={"memberNo": "M-1001"}, llm_target="getMemberDeliveryList"
    )
    plan = ENGINE.plan(QUERY, "getMemberDeliveryDetail", entities={"memberNo": "M-1001"})
    for data, kind in [
        (wire.search_to_dict(found), "search"),
        (wire.selection_to_dict(selection), "select"),
        (wire.plan_to_dict(plan), "plan"),
    ]:
        assert validate(data, "engine-response", definition=f"{kind}_response") == []
    again = wire.search_from_dict(wire.search_to_dict(found))
    assert [r.tool_id for r in again.rows] == [r.tool_id for r in found.rows]
    assert wire.selection_from_dict(wire.selection_to_dict(selection)) == selection
    assert wire.plan_from_dict(wire.plan_to_dict(plan)) == plan


def test_selection_block_is_the_seed_shape() -> None:
    found = ENGINE.search(QUERY, k=5)
    block = wire.selection_to_dict(
        ENGINE.select(QUERY, found, entities={}, llm_target="getMemberDeliveryList")
    )
    assert block == {
        "llm_target": "getMemberDeliveryList",
        "selected_target": "getMemberDeliveryDetail",
        "overrode_llm": True,
        "reason_codes": ["llm_target_overridden", "selected_by_strong_evidence"],
    }


INVALID: list[tuple[str, Any]] = [
    ("search", {"rows": [{"tool_id": 1, "rank": 1, "score": 1}]}),
    ("search", {"rows": [{"tool_id": "a", "rank": 1, "score": 1, "field_scores": {"id": "x"}}]}),
    ("search", {"rows": [{"tool_id": "a", "rank": 1, "score": 1, "corrections": {"x": 1}}]}),
    ("select", {"selected_target": "a", "overrode_llm": False}),
    ("select", {"selected_target": "a", "overrode_llm": False, "reason_codes": [1]}),
    ("plan", {"status": "synthesized"}),
    ("plan", {"plan_id": "p", "status": "synthesized", "steps": [{"arguments": {}}]}),
    ("plan", {"plan_id": "p", "status": "needs_input", "user_input_slots": [{"tool_id": "a"}]}),
    ("plan", {"plan_id": "p", "status": "failed", "diagnostics": "text"}),
]


@pytest.mark.parametrize(("kind", "data"), INVALID)
def test_the_reader_and_the_schema_reject_the_same_replies(kind: str, data: Any) -> None:
    parse = {
        "search": wire.search_from_dict,
        "select": wire.selection_from_dict,
        "plan": wire.plan_from_dict,
    }[kind]
    with pytest.raises(InputError, match=r"reply: \$"):
        parse(data)
    assert validate(data, "engine-response", definition=f"{kind}_response")
