"""qlab.jsonpath: plain field chains are answered without jsonpath-ng, and must select exactly what jsonpath-ng
selects; everything else goes to jsonpath-ng."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonpath_ng.ext.parser import parse

from qlab import jsonpath
from qlab.errors import InputError

NAMES = ["data", "id", "a", "b_2", "_x", "where", "len", "in", "items", "memberNo"]
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3))
DOCUMENTS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NAMES), inner, max_size=4)
    ),
    max_leaves=12,
)
CHAINS = st.lists(st.sampled_from(NAMES), max_size=4).map(
    lambda names: "".join(["$", *(f".{n}" for n in names)])
)


def _library(expression: str, document: Any) -> list[Any]:
    return [m.value for m in parse(expression).find(document)]


@given(CHAINS, DOCUMENTS)
def test_a_field_chain_selects_what_jsonpath_ng_selects(expression: str, document: Any) -> None:
    try:
        expected = _library(expression, document)
    except Exception:  # an operator word jsonpath-ng does not read as a field: the fast path must not take it
        assert jsonpath._chain(expression) is None
        return
    assert jsonpath.find(expression, document) == expected
    assert jsonpath.exists(expression, document) == bool(expected)


@pytest.mark.parametrize(
    ("expression", "fast"),
    [("$", True), ("$.data", True), ("$.data.memberNo", True), ("$.data[0]", False), ("$..id", False),
     ("$.data[?(@.id > 1)]", False), ("$.where", False), ("$.a-b", False), ("$.*", False)],
)  # fmt: skip
def test_only_plain_field_chains_take_the_fast_path(expression: str, fast: bool) -> None:
    assert (jsonpath._chain(expression) is not None) is fast


@pytest.mark.parametrize(
    ("expression", "document", "values"),
    [
        ("$.data[0].id", {"data": [{"id": 7}]}, [7]),
        ("$..id", {"a": {"id": 1}, "b": [{"id": 2}]}, [1, 2]),
        ("$.data[?(@.n > 1)].n", {"data": [{"n": 1}, {"n": 2}]}, [2]),
        ("$.data", {"data": None}, [None]),
        ("$.data", [{"data": 1}], []),
    ],
)
def test_library_paths_and_edge_values(expression: str, document: Any, values: list[Any]) -> None:
    assert jsonpath.find(expression, document) == values == _library(expression, document)


def test_an_invalid_path_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"invalid JSONPath '\$\.data\['"):
        jsonpath.compile_path("$.data[")
    assert not jsonpath.is_valid("$.data[") and jsonpath.is_valid("$.data")
