"""The result artifact: located read errors, key order, the case lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qlab.errors import InputError
from qlab.results import CheckedJSON, EncodedJSON, JSONPack
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


def test_encoded_rows_are_spliced_into_the_case_line_as_json() -> None:
    rows = [{"tool_id": "getMember", "rank": 1, "score": 2.5, "field_scores": {"id": 2.5}, "matched_terms": ["member"],
             "corrections": {}}]  # fmt: skip
    case = {
        "case_id": "c-1",
        "status": "passed",
        "search": {"hit": True, "rows": EncodedJSON.of(rows), "top_k": 5},
    }
    expected = {"case_id": "c-1", "status": "passed", "search": {"hit": True, "rows": rows, "top_k": 5}}
    assert json.loads(artifact._encode_case(case)) == expected
    # a value that happens to hold the placeholder does not confuse the splice
    sneaky = {**case, "case_id": artifact._HOLE}
    assert json.loads(artifact._encode_case(sneaky)) == {**expected, "case_id": artifact._HOLE}
    # packed rows (what the search stage keeps) are spliced the same way, and so is the placeholder fallback
    packed = {**case, "search": {**case["search"], "rows": JSONPack(plain_limit=0).add(CheckedJSON.of(rows))}}
    assert json.loads(artifact._encode_case(packed)) == expected
    assert json.loads(artifact._encode_case({**packed, "case_id": artifact._HOLE})) == {
        **expected,
        "case_id": artifact._HOLE,
    }
