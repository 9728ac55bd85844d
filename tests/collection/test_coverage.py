"""Schema coverage of one tool: each check, its weight, and the words for what is missing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from qlab.collection.coverage import WEIGHTS, tool_coverage
from qlab.collection.model import Parameter, Tool

from .helpers import tool


def test_weights_add_up_to_one() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)


def test_a_complete_tool_scores_one() -> None:
    complete = tool(
        "getPet",
        summary="Get a pet",
        description="Returns one pet by id.",
        params=[Parameter("petId", "path", True, {"type": "integer"}, "The pet")],
        responses={"200": {"type": "object"}},
        examples={"petId": 1},
    )
    cov = tool_coverage(complete)
    assert cov.score == pytest.approx(1.0) and cov.missing == ()


def test_each_gap_costs_its_weight() -> None:
    bare = tool(
        "get_pets_petId",
        params=[
            Parameter("petId", "path", True, {}, ""),
            Parameter("q", "query", False, {"type": "string"}, "Q"),
        ],
        responses={"200": {}},
    )
    bare = replace(bare, name="GET /get_pets_petId")  # how openapi names an operation without operationId
    cov = tool_coverage(bare)
    assert cov.checks == {
        "operation_id": 0.0,
        "summary": 0.0,
        "description": 0.0,
        "parameters_described": 0.5,
        "parameters_typed": 0.5,
        "response_schema": 0.0,
        "examples": 0.0,
    }
    assert cov.score == pytest.approx(0.15)
    assert cov.missing == (
        "operationId",
        "summary",
        "description",
        "parameter descriptions: petId",
        "parameter types: petId",
        "response schema for 200",
        "examples: petId",
    )


def test_no_content_responses_and_description_equal_to_summary() -> None:
    delete = tool("deletePet", method="DELETE", summary="Delete", description="Delete", responses={"204": {}})
    cov = tool_coverage(delete)
    assert cov.checks["response_schema"] == 1.0 and cov.checks["description"] == 0.0
    mcp = Tool(id="x", name="x", family="f", source="s", kind="mcp", summary="X")
    assert tool_coverage(mcp).missing == ("description", "output schema")
