"""The result artifact: located read errors, key order, the case lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import artifact_samples as samples
from qlab.contracts.errors import InputError
from qlab.engine.types import SearchRow
from qlab.run import artifact


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "x.json:1:2: $: invalid JSON"),
        ("[]", "x.json: $: a result artifact is a JSON object, got list"),
        ('{"schema_version": 1}', "x.json: $.cases: missing or not a list"),
        (
            '{"schema_version": 9, "cases": [], "gates": [], "suites": {}}',
            "x.json: $.schema_version: 9 is not supported",
        ),
    ],
)
def test_read_errors_say_where(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        artifact.read(path)
    assert str(exc.value).startswith(f"{tmp_path}/{message}")


def test_binary_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="not UTF-8"):
        artifact.read(path)
    with pytest.raises(InputError, match="not found"):
        artifact.read(tmp_path / "nope.json")


def test_dumps_ordered() -> None:
    text = artifact.dumps(artifact.ordered({"decision": {}, "run_id": "r", "schema_version": 1}))
    assert list(json.loads(text)) == ["schema_version", "run_id", "decision"]


def test_search_rows_are_written_into_the_case_line_and_read_back_as_rows(tmp_path: Path) -> None:
    """The two edges of a case's search rows: written as their JSON objects (``SearchRow.to_dict``) into its line,
    read back as SearchRows by ``read``."""
    row = SearchRow("getMember", 1, 2.5, {"id": 2.5}, ("member",), {})
    case = {"case_id": "c-1", "status": "passed", "search": {"hit": True, "rows": (row,), "top_k": 5}}
    line = artifact.dumps({"cases": [case]}).splitlines()[2]
    assert json.loads(line) == {**case, "search": {**case["search"], "rows": [row.to_dict()]}}
    path = tmp_path / "result.json"
    whole = samples.full(samples.result())
    whole["cases"][0]["search"] = case["search"]
    path.write_text(artifact.dumps(whole), encoding="utf-8")
    assert artifact.read(path)["cases"][0]["search"]["rows"] == (row,)


def test_equal_derived_objects_of_flat_values_are_shared_and_written_the_same() -> None:
    """Rule: a case's ``actual_output`` and ``metrics`` are one object for every case whose are equal (same
    values of the same types), never merged across 1 / 1.0 / true or 0.0 / -0.0, never for nested values."""
    shared: dict[tuple[object, ...], dict[str, object]] = {}
    first = {"hit_rank": 1, "top_1": "getMember"}
    assert artifact._shared(dict(first), shared) is artifact._shared(dict(first), shared)
    assert artifact._shared({"hit_rank": 2, "top_1": "getMember"}, shared) == {
        "hit_rank": 2,
        "top_1": "getMember",
    }
    for a, b in (({"x": 1}, {"x": 1.0}), ({"x": 1}, {"x": True}), ({"x": 0.0}, {"x": -0.0})):
        got_a, got_b = artifact._shared(dict(a), shared), artifact._shared(dict(b), shared)
        assert got_a is not got_b and json.dumps(got_b) == json.dumps(b)
    nested = {"plan_tools": ["a"]}
    assert artifact._shared(nested, shared) is nested and artifact._shared(dict(nested), shared) is not nested
    assert artifact._shared(dict(first), None) is not artifact._shared(
        dict(first), None
    )  # no table: no sharing
    # through summarize: two passing search cases with the same rank and top tool share both objects
    cases = [
        {"case_id": f"c-{i}", "suite": "s", "mode": "search", "status": "passed", "latency_ms": {"search": 1.0},
         "search": {"hit": True, "hit_rank": 1, "top_k": 5, "rows": (SearchRow("getMember", 1, 2.0),),
                    "query_terms": []}}
        for i in range(2)
    ]  # fmt: skip
    art = artifact.summarize({"cases": cases, "suites": {}, "gates": [], "prerun": [], "stages": {}})
    one, two = art["cases"]
    assert one["actual_output"] is two["actual_output"] and one["metrics"] is two["metrics"]
    assert one["actual_output"] == {"hit_rank": 1, "top_1": "getMember"} and one["metrics"] == {
        "correctness": 1.0
    }
