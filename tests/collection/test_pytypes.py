"""Type hints → JSON Schema."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import pytest

from qlab.collection.pytypes import schema_for
from qlab.collection.refs import RECURSIVE_REF


@dataclass
class Node:
    name: str
    children: list[Node] = field(default_factory=list)


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (int, {"type": "integer"}),
        (bool, {"type": "boolean"}),
        (float, {"type": "number"}),
        (type(None), {"type": "null"}),
        (Any, {}),
        (datetime.date, {"type": "string", "format": "date"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (list, {"type": "array"}),
        (Sequence[int], {"type": "array", "items": {"type": "integer"}}),
        (set[str], {"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, str], {"type": "array", "minItems": 2, "maxItems": 2,
                           "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}),
        (Mapping[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (dict, {"type": "object"}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045 - the spelling under test
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (Union[int, Any], {}),  # noqa: UP007 - the spelling under test
        ("NotEvaluated", {}),
    ],
)  # fmt: skip
def test_hints(hint: Any, schema: dict[str, Any]) -> None:
    assert schema_for(hint) == schema


def test_recursive_dataclass_ends_in_a_marker() -> None:
    schema = schema_for(Node)
    assert schema["properties"]["children"] == {"type": "array", "items": {RECURSIVE_REF: "Node"}}
    assert schema["required"] == ["name"]
