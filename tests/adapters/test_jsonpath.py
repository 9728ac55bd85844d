"""qlab.adapters.jsonpath: jsonpath-ng behind one module, each expression compiled once."""

from __future__ import annotations

from typing import Any

import pytest
from jsonpath_ng.ext.parser import parse

from qlab.adapters import jsonpath
from qlab.contracts.errors import InputError


def _library(expression: str, document: Any) -> list[Any]:
    return [m.value for m in parse(expression).find(document)]


@pytest.mark.parametrize(
    ("expression", "document", "values"),
    [
        ("$.data.memberNo", {"data": {"memberNo": "M-1"}}, ["M-1"]),
        ("$.data.memberNo", {"data": {}}, []),
        ("$", {"a": 1}, [{"a": 1}]),
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
    with pytest.raises(InputError, match=r"invalid JSONPath '\$\.where'"):
        jsonpath.compile_path("$.where")  # an operator word, not a field
    assert not jsonpath.is_valid("$.data[") and jsonpath.is_valid("$.data")
