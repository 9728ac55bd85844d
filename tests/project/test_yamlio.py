from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qlab.contracts.errors import ConfigError
from qlab.project.yamlio import dump_scalar, parse_yaml


def errors(text: str, **limits: int) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_yaml(text, "f.yaml", **limits)
    return [d.render() for d in caught.value.diagnostics]


def test_values_and_their_positions() -> None:
    doc = parse_yaml("suites:\n  search:\n    mode: search\n    cases: [a.yaml, b.yaml]\n", "f.yaml")
    assert doc.data == {"suites": {"search": {"mode": "search", "cases": ["a.yaml", "b.yaml"]}}}
    assert doc.locate(("suites", "search", "mode")) == (3, 11)
    assert doc.locate(("suites", "search", "mode"), prefer_key=True) == (3, 5)
    assert doc.locate(("suites", "search", "cases", 1)) == (4, 21)
    # a path that is not there points at its nearest ancestor
    assert doc.locate(("suites", "search", "k")) == (3, 5)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True), ("False", False), ("yes", "yes"), ("no", "no"), ("on", "on"), ("~", None), ("null", None),
        ("", None), ("12", 12), ("-3", -3), ("0o17", 15), ("0x1f", 31), ("017", 17), ("1_000", "1_000"),
        ("1.5", 1.5), ("1e3", 1000.0), (".5", 0.5), ("1:30", "1:30"), ("2024-01-01", "2024-01-01"),
        ("'12'", "12"), ('"true"', "true"), ("!!str 12", "12"), ("!!int '7'", 7), ("!!float 2", 2.0),
        ("127.0.0.1", "127.0.0.1"),
    ],
)  # fmt: skip
def test_yaml_1_2_core_scalars(text: str, value: object) -> None:
    assert parse_yaml(f"v: {text}\n", "f.yaml").data["v"] == value


def test_numbers_that_are_not_json_numbers_are_refused_where_they_stand() -> None:
    """.nan, .inf, a float that reads as infinity and an integer beyond 64 bits would crash the first check
    that meets them (exit 3, an OverflowError): they are located errors instead, every one of them."""
    found = errors(
        "a: .inf\nb: -.Inf\nc: .nan\nd: 1e400\ne: " + "9" * 40 + "\nf: !!float " + "9" * 400 + "\n"
        "g: 0x" + "f" * 17 + "\nok: [1.5e300, -9223372036854775807, 0x1f]\n"
    )
    assert [line.split(": the number")[0] for line in found] == [
        "f.yaml:1:4: $.a", "f.yaml:2:4: $.b", "f.yaml:3:4: $.c", "f.yaml:4:4: $.d", "f.yaml:5:4: $.e",
        "f.yaml:6:4: $.f", "f.yaml:7:4: $.g",
    ]  # fmt: skip
    assert "'.nan' is not finite" in found[2] and "'1e400' is not finite" in found[3]
    assert "is out of range: integers must lie within ±9,223,372,036,854,775,807" in found[4]
    assert "(400 characters)" in found[5] and "9" * 30 not in found[5]  # a long number is not echoed whole
    assert parse_yaml("ok: [1.5e300, -9223372036854775807, 0x1f]\n", "f.yaml").data == {
        "ok": [1.5e300, -9223372036854775807, 31]
    }


def test_keys_are_strings_as_written() -> None:
    assert parse_yaml("200: ok\nyes: 1\nnull: 2\n", "f.yaml").data == {"200": "ok", "yes": 1, "null": 2}


def test_duplicate_keys_are_all_reported() -> None:
    assert errors("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n") == [
        "f.yaml:4:3: $.b.c: duplicate key 'c' (first written at line 3); YAML would keep only the last one, so "
        "remove or rename one of them",
        "f.yaml:5:1: $.a: duplicate key 'a' (first written at line 1); YAML would keep only the last one, so "
        "remove or rename one of them",
    ]


def test_anchors_aliases_and_merge_keys() -> None:
    doc = parse_yaml(
        "base: &base {k: 5, mode: search}\ns:\n  <<: *base\n  mode: plan\nt: *base\nu:\n  <<: [*base, {z: 1}]\n",
        "f.yaml",
    )
    assert doc.data["s"] == {"mode": "plan", "k": 5}
    assert doc.data["t"] == {"k": 5, "mode": "search"}
    assert doc.data["u"] == {"k": 5, "mode": "search", "z": 1}
    assert doc.locate(("t",)) == (5, 4)  # the alias site


def test_merge_of_a_scalar_is_an_error() -> None:
    assert errors("a: &x 1\nb:\n  <<: *x\n") == [
        "f.yaml:3:3: $.b: '<<' merges a mapping or a list of mappings"
    ]


def test_alias_expansion_is_limited() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    (message,) = errors(bomb)
    assert "aliases expand to more than 10000 values (an alias bomb?)" in message
    # the limit is a parameter; a small document within it loads
    assert parse_yaml("a: &a [1, 2]\nb: [*a, *a]\n", "f.yaml", max_alias_nodes=6).data["b"] == [
        [1, 2],
        [1, 2],
    ]
    assert errors("a: &a [1, 2]\nb: [*a, *a]\n", max_alias_nodes=5)


def test_alias_expansion_is_limited_in_characters_too() -> None:
    """Was: a few aliases of a long string passed the count of values and expanded to gigabytes later (qlab
    validate ran out of memory). Keys count as text, as values do."""
    leaf = "x" * 100_000
    (message,) = errors(f"a: &a {leaf}\nb: [{', '.join(['*a'] * 11)}]\n")
    assert (
        message.startswith("f.yaml:2:")
        and "$.b[10]: aliases expand to more than 1048576 characters" in message
    )
    keys = f"a: &a\n  ? {leaf}\n  : 1\nb: [{', '.join(['*a'] * 11)}]\n"
    assert "characters of text" in errors(keys)[0]
    # the limit is a parameter; within it the aliases load
    assert parse_yaml("a: &a xyz\nb: [*a, *a]\n", "f.yaml", max_alias_chars=6).data["b"] == ["xyz", "xyz"]
    assert errors("a: &a xyz\nb: [*a, *a]\n", max_alias_chars=5)


def test_recursive_and_undefined_aliases() -> None:
    assert errors("a: &a [1, *a]\n") == [
        "f.yaml:1:11: $.a[1]: alias *a refers to a value that contains it (recursive alias)"
    ]
    assert errors("a: *nope\n") == ["f.yaml:1:4: $.a: alias *nope has no anchor &nope before it"]


def test_deep_nesting_is_refused_without_crashing_the_interpreter() -> None:
    # libyaml's own composer recurses in C and crashes on this; qlab builds from events with a depth limit
    (message,) = errors("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert message.endswith("nesting is deeper than 100 levels")
    assert errors("- " * 50 + "x\n", max_depth=10)


def test_tags_that_would_build_objects_are_refused() -> None:
    assert errors("a: !!python/object/apply:os.system [ls]\nb: !custom x\nc: !!binary aGk=\n") == [
        "f.yaml:1:4: $.a: unsupported YAML tag '!!python/object/apply:os.system': qlab files hold plain data only",
        "f.yaml:2:4: $.b: unsupported YAML tag '!custom': qlab files hold plain data only",
        "f.yaml:3:4: $.c: unsupported YAML tag '!!binary': qlab files hold plain data only",
    ]
    assert errors("a: !!int x\n") == ["f.yaml:1:4: $.a: 'x' is not a valid !!int"]


def test_one_document_only_and_not_empty() -> None:
    assert errors("a: 1\n---\nb: 2\n") == [
        "f.yaml:2:1: a second YAML document ('---') starts here; a qlab file holds one document"
    ]
    assert errors("# nothing\n") == ["f.yaml:1:1: file holds no data (only comments or blank lines)"]
    assert parse_yaml("---\na: 1\n...\n", "f.yaml").data == {"a": 1}


def test_complex_keys_are_refused() -> None:
    assert errors("? [a, b]\n: 1\n") == [
        "f.yaml:1:3: $: a mapping key must be a plain value, not a list or mapping"
    ]


def test_syntax_errors_are_located_with_hints() -> None:
    (tab,) = errors("a:\n\tb: 1\n")
    assert tab.startswith("f.yaml:2:1: invalid YAML: ") and tab.endswith("; indent with spaces, not tabs")
    (colon,) = errors("a: b: c\n")
    assert colon.startswith("f.yaml:1:5: invalid YAML: mapping values are not allowed")
    assert colon.endswith("; quote a value that contains ': '")


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
    | st.sampled_from(
        ["true", "no", "null", "~", "1.5", "0x1F", "a: b", "- x", "#c", " lead", "trail ", "", "a\nb"]
    )
)


@settings(max_examples=200, deadline=None)
@given(SCALARS, st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=20))
def test_a_scalar_line_reads_back_as_key_value_and_item_with_a_comment(value: Any, key: str) -> None:
    """What ``qlab learn accept`` adds to a file people keep: one line, a comment after it."""
    line = dump_scalar(value)
    assert "\n" not in line
    text = f"{dump_scalar(key)}: {line}  # accepted by a\nlist:\n  - {line}  # accepted by b\n"
    assert parse_yaml(text, "x.yaml").data == {key: value, "list": [value]}


def test_a_scalar_is_plain_where_it_reads_back_as_itself() -> None:
    assert [dump_scalar(v) for v in ("shipment status", "D-5003", "true", "12", "a: b", None, 3)] == [
        "shipment status", "D-5003", '"true"', '"12"', "'a: b'", "null", "3",
    ]  # fmt: skip
