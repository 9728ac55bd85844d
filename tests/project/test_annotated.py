"""YAML written by the emitter with comments added after: any text round-trips as data, and no comment can
end early, add a key or change a value."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qlab.project.annotated import Annotated, comment_text, commented_out, render
from qlab.project.interpolate import expand, literal
from qlab.project.yamlio import dump_yaml, parse_yaml

HOSTILE = ["a\nb", "x # y", "k: v", "'\"", "${X}", "a\u2028b", "a\u0085b", "a\x00b", "z" * 10_000, "1e3",
           "0o17", "no", "- x", "", " lead", "trail ", "\ufeffbom", "[x]", "{a: 1}", "? q", "&a", "*a", "!t",
           "%d", "@x", "`x", "|", ">", "a\tb", "a\rb", "\x7f", "\x1b[31m", "é😀"]  # fmt: skip
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30) | st.sampled_from(HOSTILE)
DATA = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63) + 1, 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(DATA)
def test_whatever_the_data_holds_it_reads_back_the_same(data: Any) -> None:
    assert parse_yaml(dump_yaml(data), "x.yaml").data == data


def test_hostile_strings_as_keys_and_values() -> None:
    data = {"keys": {text: text for text in HOSTILE}, "list": HOSTILE, "long key": {"k" * 2000: 1}}
    text = dump_yaml(data)
    assert parse_yaml(text, "x.yaml").data == data
    assert "\n- " not in text.split("list:")[0]  # nothing of a value started a line of its own


def test_lone_surrogates_become_the_replacement_character() -> None:
    assert parse_yaml(dump_yaml({"s": "a\ud800b"}), "x.yaml").data == {"s": "a\ufffdb"}


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",))))
def test_comment_text_is_one_inert_line(text: str) -> None:
    line = comment_text(text)
    assert len(line.splitlines()) <= 1 and "\x85" not in line and "\u2028" not in line
    data = {"a": 1, "b": [1, 2]}
    rendered = render(Annotated(data, header=[text], above={("a",): [text]}, beside={("b",): text},
                                below={("b",): [text]}))  # fmt: skip
    assert parse_yaml(rendered, "x.yaml").data == data


def test_comments_sit_above_beside_and_below_their_entries() -> None:
    data = {"gates": [{"name": "build", "stop_if": [{"below": 0.5}]}, {"name": "search"}], "z": "v"}
    text = render(Annotated(
        data, header=["modeline"], above={("z",): ["about z"]}, beside={("gates", 0, "stop_if", 0): "measured"},
        below={("gates", 1): commented_out([{"name": "execute"}])},
    ))  # fmt: skip
    assert text == (
        "# modeline\n"
        "gates:\n"
        "  - name: build\n"
        "    stop_if:\n"
        "      - below: 0.5  # measured\n"
        "  - name: search\n"
        "  # - name: execute\n"
        "# about z\n"
        "z: v\n"
    )
    assert comment_text("x" * 500).endswith("…") and len(comment_text("x" * 500)) == 240


@pytest.mark.parametrize("text", ["${HOME}", "$${HOME}", "$$${HOME}", "a$", "${", "$}", "${A:-${B}}", "$$"])
def test_literal_text_is_never_interpolated(text: str) -> None:
    assert expand(literal(text), {"HOME": "/root", "A": "a", "B": "b"}) == text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="${}:-AB x", max_size=20))
def test_literal_round_trips_any_dollar_brace_text(text: str) -> None:
    assert expand(literal(text), {"A": "a", "B": "b"}, strict=False) == text
