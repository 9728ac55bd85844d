"""schemas/result.schema.json and its compiled check: draft-07, a description on every property, and the
compiled check agrees with jsonschema on generated documents."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artifact_samples import full, result
from qlab.contracts import resultschema
from qlab.contracts.resources import load_schema
from qlab.contracts.resultschema import artifact_problem

SCHEMA = load_schema("result")
DEFINITIONS = (
    "search",
    "target_selector",
    "plan",
    "execute",
    "auth_readiness",
    "learning",
    "failure",
    "case",
)


def _walk(node: Any, path: str) -> list[str]:
    missing = []
    if isinstance(node, dict):
        for key, sub in (node.get("properties") or {}).items():
            if "description" not in sub:
                missing.append(f"{path}.{key}")
        for key, sub in node.items():
            missing += _walk(sub, f"{path}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            missing += _walk(sub, f"{path}[{i}]")
    return missing


def test_draft07_with_descriptions() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert SCHEMA["$id"].endswith("/result.schema.json")
    assert _walk(SCHEMA, "$") == []


def test_messages() -> None:
    assert resultschema.problem("search", {"hit": True, "top_k": 5}) is None
    assert (
        resultschema.problem("search", {"hit": "yes", "top_k": 5}, "$.search")
        == "$.search.hit: expected boolean or null, got string"
    )
    assert (
        resultschema.problem("plan", {"status": "done"})
        == "$.status: 'done' is not one of ['synthesized', 'needs_input', 'failed']"
    )
    assert (
        resultschema.problem("failure", {"stage": "x", "reason": "y", "extra": 1})
        == "$.extra: unexpected property"
    )
    assert resultschema.problem("case", {"case_id": "a"}) == "$: 'suite' is required"


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-2, 2, allow_nan=False)
    | st.sampled_from(["", "synthesized", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "hit",
                    "hit_rank",
                    "top_k",
                    "rows",
                    "tool_id",
                    "rank",
                    "status",
                    "stage",
                    "reason",
                    "selected_target",
                    "reason_codes",
                    "case_id",
                    "suite",
                    "mode",
                    "latency_ms",
                    "search",
                    "events",
                    "event",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(definition=st.sampled_from(DEFINITIONS), value=values)
def test_agrees_with_jsonschema(definition: str, value: Any) -> None:
    validator = jsonschema.Draft7Validator(
        {"$ref": f"#/definitions/{definition}", "definitions": SCHEMA["definitions"]}
    )
    assert (resultschema.problem(definition, value) is None) == validator.is_valid(value)


def test_artifact_problem_checks_the_whole_artifact() -> None:
    complete = full(result())
    assert artifact_problem(complete) is None
    trimmed = {"schema_version": 1, "cases": complete["cases"]}
    assert artifact_problem(trimmed) == "$: 'run_id' is required"
    assert (
        artifact_problem(trimmed, partial=True) is None
    )  # absent sections are allowed, present ones checked
    trimmed["cases"] = [{**complete["cases"][0], "status": 3}]
    assert artifact_problem(trimmed, partial=True) == "$.cases[0].status: expected string, got integer"


ROW = {
    "tool_id": "t",
    "rank": 1,
    "score": 1.5,
    "field_scores": {"id": 1.5},
    "matched_terms": ["a"],
    "corrections": {},
}


@pytest.mark.parametrize(
    ("definition", "value", "expected"),
    [
        ("search", {"hit": True, "top_k": 1, "hit_rank": None, "rows": [ROW]}, None),
        ("search", {"hit": True, "top_k": 0}, "$.top_k: 0 is below 1"),
        ("search", {"hit": True, "top_k": 1.0}, "$.top_k: expected integer, got number"),
        ("search", {"hit": 1, "top_k": 1}, "$.hit: expected boolean or null, got integer"),
        ("search", {"hit": True, "top_k": 1, "rows": [{**ROW, "rank": 0}]}, "$.rows[0].rank: 0 is below 1"),
        ("search", {"hit": True, "top_k": 1, "rows": [{**ROW, "score": True}]}, "$.rows[0].score: expected number, got boolean"),
        ("search", {"hit": True, "top_k": 1, "rows": [{**ROW, "field_scores": {"id": "1"}}]}, "$.rows[0].field_scores.id: expected number, got string"),
        ("search", {"hit": True, "top_k": 1, "rows": [{"tool_id": "t"}]}, "$.rows[0]: 'rank' is required"),
        ("search", {"hit": True, "top_k": 1, "rows": {}}, "$.rows: expected array, got object"),
        ("failure", {"stage": "search", "reason": "r", "extra": 1}, "$.extra: unexpected property"),
        ("failure", {"stage": "search", "reason": "r", "message": "m"}, None),
    ],
)  # fmt: skip
def test_the_compiled_check_at_the_edges(definition: str, value: Any, expected: str | None) -> None:
    assert resultschema.problem(definition, value) == expected
