from __future__ import annotations

import json
from typing import Any

import pytest

from qlab.contracts.errors import ConfigError
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


def test_json_lines_fast_path_refuses_what_the_reader_refuses() -> None:
    """Lines json.loads would take (NaN, a duplicate key, deep nesting) go to the positional reader, which
    refuses them with their place; plain lines around them are read as usual."""
    text = '{"id": "a"}\n{"id": "b", "n": NaN}\n{"id": "c", "id": "d"}\n' + "[" * 120 + "]" * 120 + "\n"
    assert errors(parse_jsonl, text) == [
        "f.json:2:18: invalid JSON: NaN is not JSON (write a number, true, false or null)",
        "f.json:3:13: $[2].id: duplicate key 'id' (first written at line 3); JSON readers keep only one of them, "
        "so remove or rename one",
        "f.json:4:101: invalid JSON: nesting is deeper than 100 levels",
    ]


def test_json_lines_positions_are_found_on_demand() -> None:
    doc = parse_jsonl('{"id": "a", "tags": ["x"]}\r\n\t{"id": "b",\t"query": "q"}\n', "f.jsonl")
    assert doc.data == [{"id": "a", "tags": ["x"]}, {"id": "b", "query": "q"}]
    assert doc.locate((2,)) == (1, 1)  # no such line: the document
    assert doc.locate((1, "query")) == (2, 23) and doc.locate((1, "query"), prefer_key=True) == (2, 14)
    assert doc.locate((0, "nothing")) == (1, 1)  # a missing key: its nearest ancestor
    # the same positions the reader records when it reads the whole file (the format before the fast path)
    assert dict(doc.values) == {(): (1, 1), (0,): (1, 1), (0, "id"): (1, 8), (0, "tags"): (1, 21),
                                (0, "tags", 0): (1, 22), (1,): (2, 2), (1, "id"): (2, 9), (1, "query"): (2, 23)}  # fmt: skip
    assert dict(doc.keys) == {
        (0, "id"): (1, 2),
        (0, "tags"): (1, 13),
        (1, "id"): (2, 3),
        (1, "query"): (2, 14),
    }
    # the keys of every line are one string each, however many lines repeat them
    assert next(iter(doc.data[0])) is next(iter(doc.data[1]))


@pytest.mark.parametrize("parse", [parse_json, parse_jsonl], ids=["json", "jsonl"])
def test_numbers_json_reads_as_infinity_or_beyond_64_bits_are_located_errors(parse: Any) -> None:
    """``1e400`` reads as infinity and ``10**400`` overflows the first float it meets (exit 3 before): both are
    located errors of the reader, with no 4,300-digit echo; the fast JSON Lines path hands them to the slow one."""
    for text, where, words in [
        ('{"a": [1, 1e400]}\n', "x:1:11: $.a[1]", "'1e400' is not finite"),
        ('{"a": -1e999}\n', "x:1:7: $.a", "is not finite"),
        ('{"a": 18446744073709551616}\n', "x:1:7: $.a", "is out of range"),
        ('{"a": ' + "9" * 5000 + "}\n", "x:1:7: $.a", "(5000 characters)' is out of range"),
    ]:
        with pytest.raises(ConfigError) as caught:
            parse(text, "x")
        (found,) = [d.render() for d in caught.value.diagnostics]
        assert found.startswith(where + ": the number") and words in found, found
        assert "invalid JSON" not in found and "9" * 40 not in found
    assert parse('{"a": [1.5e300, -9223372036854775807]}\n', "x").data in (
        {"a": [1.5e300, -9223372036854775807]},
        [{"a": [1.5e300, -9223372036854775807]}],
    )
