"""Top-K rows written straight to JSON text: the same text as wire.row_to_dict + the compact encoder, and only
for rows that fit the result schema's search_row (checked with jsonschema on generated rows)."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import jsonschema
import pytest

from qlab.engine import wire
from qlab.engine.types import SearchRow
from qlab.resources import load_schema
from qlab.results import CheckedJSON, EncodedJSON
from qlab.stages.search_rows import rows_json


def _row_validator() -> jsonschema.Draft7Validator:
    schema = load_schema("result")
    return jsonschema.Draft7Validator(
        {**schema["definitions"]["search_row"], "definitions": schema["definitions"]}
    )


def _odd(rng: random.Random, plain: Any, *odd: Any) -> Any:
    return rng.choice(odd) if rng.random() < 0.08 else plain


def _number(rng: random.Random) -> Any:
    return rng.choice([rng.uniform(-5, 50), rng.randint(0, 9), 1e-05, -0.0, 1e17, 2.00005, 123456.789012])


def _random_row(rng: random.Random) -> SearchRow:
    fields = {
        _odd(rng, name, 3, None): _odd(rng, _number(rng), math.nan, math.inf, True, "1.5", None)
        for name in rng.sample(["id", "summary", "description", "tags", "path", 'naïve "q"'], 3)
    }
    return SearchRow(
        tool_id=_odd(rng, rng.choice(["getThing1", "list\u00e9Orders", 'we"ird\\id\n']), 7, None),
        rank=_odd(rng, rng.randint(1, 9), 0, -1, True, 2.0, "1"),
        score=_odd(rng, _number(rng), math.nan, -math.inf, False, "high"),
        field_scores=fields,
        matched_terms=tuple(_odd(rng, t, 5) for t in rng.sample(["a", "b\u00fc", "c d"], 2)),
        corrections=_odd(rng, {}, {"teh": "the"}, {"x": 1}, {2: "y"}),
    )


def test_plain_rows_are_the_long_ways_text_and_fit_the_schema() -> None:
    rng = random.Random(4)
    validator = _row_validator()
    fast = 0
    for _ in range(3000):
        rows = [_random_row(rng) for _ in range(rng.randint(0, 3))]
        text = rows_json(rows)
        if text is None:
            continue
        fast += 1
        assert type(text) is CheckedJSON
        assert text == EncodedJSON.of([wire.row_to_dict(r) for r in rows]), rows
        for row in json.loads(text):
            assert validator.is_valid(row), row
    assert 500 < fast < 3000  # both ways were taken


def test_a_row_that_is_not_plain_goes_the_long_way() -> None:
    plain = SearchRow("getThing", 1, 2.5, {"id": 2.5}, ("thing",))
    assert rows_json([plain]) is not None
    for odd in (
        SearchRow("getThing", 0, 2.5),  # rank below 1: does not fit
        SearchRow("getThing", 1, math.nan),  # not JSON
        SearchRow("getThing", True, 2.5),  # type: ignore[arg-type]
        SearchRow("getThing", 1, 2.5, {"id": "high"}),  # type: ignore[dict-item]
        SearchRow("getThing", 1, 2.5, matched_terms=(1,)),  # type: ignore[arg-type]
    ):
        assert rows_json([plain, odd]) is None, odd


def test_a_number_is_written_as_json_writes_it_rounded_to_four_places() -> None:
    from qlab.stages.search_rows import _number

    rng = random.Random(11)
    values = [0.0, -0.0, 1e-4, 5e-5, 0.00015, 2.00005, 1e11 - 0.5, 1e11, -1e11, 123456789.12345, 1e16, 3, -7]
    values += [rng.uniform(-1, 1) * 10 ** rng.randint(-6, 13) for _ in range(20_000)]
    values += [round(rng.uniform(0, 100), 4) + 0.00005 for _ in range(2_000)]  # halfway in decimal
    for value in values:
        assert _number(value) == json.dumps(round(value, 4)), value
    assert [_number(v) for v in (math.nan, math.inf, True, "1", None)] == [None] * 5


def test_shared_read_only_evidence_is_written_once_and_never_served_stale() -> None:
    """The JSON of a row's evidence is kept for read-only evidence objects (the built-in engine shares them)
    and reused only for those very objects: other corrections, or a plain dict changed in place, are written
    anew."""
    from types import MappingProxyType

    fields = MappingProxyType({"id": 1.5})
    terms = ("parcel",)
    none = MappingProxyType({})
    fixed = MappingProxyType({"parcl": "parcel"})

    def text(row: SearchRow) -> Any:
        found = rows_json([row])
        assert found is not None
        return json.loads(str(found))[0]

    first = text(SearchRow("a", 1, 1.5, fields, terms, none))
    again = text(SearchRow("b", 2, 1.5, fields, terms, none))
    assert (first["corrections"], again["tool_id"], again["rank"]) == ({}, "b", 2)
    assert text(SearchRow("a", 1, 1.5, fields, terms, fixed))["corrections"] == {"parcl": "parcel"}
    mutable = {"id": 1.0}
    row = SearchRow("a", 1, 1.0, mutable, terms, none)
    assert text(row)["field_scores"] == {"id": 1.0}
    mutable["id"] = 2.0
    assert text(row)["field_scores"] == {"id": 2.0}


def test_the_json_memo_keeps_two_bounded_generations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: the evidence JSON memo holds two generations of its ``size`` entries at most; an entry of the
    old one used again moves to the young one; the text is the same whether it came from the memo or not."""
    from types import MappingProxyType

    from qlab.stages import search_rows

    monkeypatch.setattr(search_rows._TAILS, "size", 3)
    search_rows.trim()
    none = MappingProxyType({})
    evidence = [(MappingProxyType({"id": float(i)}), (f"t{i}",)) for i in range(10)]
    first = [str(rows_json([SearchRow("a", 1, 1.0, f, t, none)])) for f, t in evidence]
    assert len(search_rows._TAILS.young) <= 3 and len(search_rows._TAILS.old) <= 3
    old_fields, old_terms = next((f, t) for f, t in evidence if id(f) in search_rows._TAILS.old)
    again = str(rows_json([SearchRow("a", 1, 1.0, old_fields, old_terms, none)]))
    assert id(old_fields) in search_rows._TAILS.young  # moved to the young generation
    assert again == first[next(i for i, (f, _t) in enumerate(evidence) if f is old_fields)]
    assert [str(rows_json([SearchRow("a", 1, 1.0, f, t, none)])) for f, t in evidence] == first
    search_rows.trim()
    assert not search_rows._TAILS.young and not search_rows._TAILS.old
