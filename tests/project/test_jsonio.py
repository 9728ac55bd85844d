from __future__ import annotations

import json

import pytest

from qlab.errors import ConfigError
from qlab.project.jsonio import parse_json, parse_jsonl


def errors(parse: object, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse(text, "f.json")  # type: ignore[operator]
    return [d.render() for d in caught.value.diagnostics]


def test_values_and_positions() -> None:
    doc = parse_json('{"id": "a",\n "assertions": [\n  {"type": "http_status", "in": [200]}\n ]}', "f.json")
    assert doc.data == {"id": "a", "assertions": [{"type": "http_status", "in": [200]}]}
    assert doc.locate(("id",)) == (1, 8)
    assert doc.locate(("assertions", 0, "in", 0)) == (3, 34)
    assert doc.locate(("assertions", 0, "type"), prefer_key=True) == (3, 4)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "\\u00e9\\n\\"x\\""}',
        "[1, -2.5e3, true, false, null]",
        '{"nested": {"deep": [[], {}]}}',
        '"just a string"',
    ],
)
def test_same_data_as_the_standard_library(text: str) -> None:
    assert parse_json(text, "f.json").data == json.loads(text)


def test_syntax_errors_say_where_and_what() -> None:
    assert errors(parse_json, '{"a": 1,}') == [
        "f.json:1:9: invalid JSON: expected a key in double quotes (JSON has no trailing commas)"
    ]
    assert errors(parse_json, "[1, 2,]") == [
        "f.json:1:7: invalid JSON: expected a value (JSON has no trailing commas)"
    ]
    assert errors(parse_json, '{"a": NaN}') == [
        "f.json:1:7: invalid JSON: NaN is not JSON (write a number, true, false or null)"
    ]
    assert errors(parse_json, '{"a": 1} {"b": 2}') == [
        "f.json:1:10: invalid JSON: unexpected text after the JSON value (one value per file; JSON Lines files end in .jsonl)"
    ]
    assert errors(parse_json, '{"a": "x') == [
        "f.json:1:7: invalid JSON: unterminated string: a closing '\"' is missing"
    ]
    assert errors(parse_json, '{\n  "a" 1}') == ["f.json:2:7: invalid JSON: expected ':' after the key"]
    assert errors(parse_json, "") == ["f.json:1:1: invalid JSON: unexpected end of file: expected a value"]


def test_duplicate_keys() -> None:
    assert errors(parse_json, '{"a": 1,\n "a": 2}') == [
        "f.json:2:2: $.a: duplicate key 'a' (first written at line 1); JSON readers keep only one of them, so "
        "remove or rename one"
    ]


def test_nesting_limit() -> None:
    assert errors(parse_json, "[" * 200 + "]" * 200)[0].endswith("nesting is deeper than 100 levels")


def test_json_lines() -> None:
    doc = parse_jsonl('{"id": "a"}\n\n  {"id": "b", "query": "q"}\n', "f.jsonl")
    assert doc.data == [{"id": "a"}, {"id": "b", "query": "q"}]
    assert doc.locate((1, "query")) == (3, 24)
    assert doc.locate((1,)) == (3, 3)


def test_json_lines_reports_every_bad_line() -> None:
    assert errors(parse_jsonl, '{"id": "a"}\n{bad}\n{"id": "c", "id": "d"}\n[1,]\n') == [
        "f.json:2:2: invalid JSON: expected a key in double quotes",
        "f.json:3:13: $[2].id: duplicate key 'id' (first written at line 3); JSON readers keep only one of them, "
        "so remove or rename one",
        "f.json:4:4: invalid JSON: expected a value (JSON has no trailing commas)",
    ]
