"""The in-run checks at a stage boundary: the output_schema check of stage objects whose bulky members were
encoded (EncodedJSON) or encoded after their stage checked them (CheckedJSON)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from qlab import resultschema
from qlab.metrics import STAGE_OBJECTS
from qlab.results import CaseResult, CheckedJSON, EncodedJSON, plain
from qlab.run import boundary

ROW = {
    "tool_id": "getHealth",
    "rank": 1,
    "score": 2.5,
    "field_scores": {"id": 2.5},
    "matched_terms": ["health"],
    "corrections": {},
}


def _search(rows: Any, **over: Any) -> dict[str, Any]:
    return {"hit": True, "hit_rank": 1, "top_k": 5, "rows": rows, "query_terms": ["health"], **over}


def _check(*objects: dict[str, Any]) -> tuple[bool, str, boundary.SchemaTally]:
    results = [CaseResult(f"c{i}", "s", "search", search=obj) for i, obj in enumerate(objects)]
    tally = boundary.SchemaTally()
    ok, message = boundary.schema_check("search", results, tally)
    return ok, message, tally


def test_checked_rows_are_not_decoded_and_the_rest_is_still_checked() -> None:
    ok, message, tally = _check(_search(CheckedJSON.of([ROW])), _search(CheckedJSON.of([ROW]), top_k="5"))
    assert not ok and (tally.checked, tally.valid) == (2, 1)
    assert "c1: $.search.top_k: expected integer, got string" in message


def test_encoded_rows_that_do_not_fit_are_decoded_and_located() -> None:
    ok, message, _ = _check(_search(EncodedJSON.of([ROW, {**ROW, "rank": 0}])))
    assert not ok and "c0: $.search.rows[1].rank: 0 is below 1" in message


def test_a_missing_required_member_is_found_next_to_checked_rows() -> None:
    bad = _search(CheckedJSON.of([ROW]))
    del bad["hit"]
    ok, message, _ = _check(bad)
    assert not ok and "c0: $.search: 'hit' is required" in message


def _random_search(rng: random.Random) -> dict[str, Any]:
    pick = rng.random
    row = {
        "tool_id": "t" if pick() > 0.1 else 3,
        "rank": rng.choice([1, 2, 0, True, "1"]) if pick() < 0.3 else 1,
        "score": rng.choice([1.5, 2, None, "x"]) if pick() < 0.3 else 0.5,
        "matched_terms": ["a"] if pick() > 0.1 else [1],
    }
    obj: dict[str, Any] = {
        "hit": rng.choice([True, False, None, 1]),
        "top_k": rng.choice([5, 0, "5"]),
        "rows": [row],
    }
    if pick() < 0.5:
        obj["hit_rank"] = rng.choice([1, None, 0, "x"])
    if pick() < 0.2:
        del obj["top_k"]
    return obj


def test_the_verdict_is_the_plain_checks_on_generated_objects() -> None:
    # the search stage seals rows as CheckedJSON only when the whole object fits, as engine_calls does
    ok_search = resultschema.checker("search")[0]
    rng = random.Random(6)
    for _ in range(500):
        obj = _random_search(rng)
        sealed = dict(obj, rows=(CheckedJSON if ok_search(obj) else EncodedJSON).of(obj["rows"]))
        want = resultschema.problem("search", plain(sealed), "$.search")
        assert boundary._problem("search", sealed) == want, obj


@pytest.mark.parametrize("definition", sorted({d for keys in STAGE_OBJECTS.values() for d in keys}))
def test_stage_objects_check_their_members_independently(definition: str) -> None:
    # what makes checking "the rest" sound: no anyOf/allOf/oneOf that ties the members of a stage object together
    node = resultschema.load()["definitions"][definition]
    assert not {"anyOf", "allOf", "oneOf", "if", "dependencies"} & set(node)
