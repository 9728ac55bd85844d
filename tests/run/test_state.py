"""The run's state: stage details recorded as JSON data."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from qlab.results import EncodedJSON
from qlab.run.state import _jsonable


@dataclasses.dataclass
class Point:
    x: int
    tags: tuple[str, ...] = ()


class Named:
    def to_dict(self) -> dict[str, Any]:
        return {"name": ("a", "b"), 3: None}


def _reference(value: Any) -> Any:  # the rule, written the slow way
    if hasattr(value, "to_dict"):
        return _reference(value.to_dict())
    if isinstance(value, Mapping):
        return {str(k): _reference(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_reference(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return _reference(dataclasses.asdict(value))
    return value


def test_stage_details_become_json_data_whatever_they_hold() -> None:
    """Rule: dataclasses, objects with ``to_dict``, tuples, sets and read-only mappings become JSON data, keys
    become strings, and plain values (a str subclass such as EncodedJSON included) are kept as they are."""
    details = {
        "plain": [1, 2.5, "x", None, True, {"n": [1, {"m": (1, 2)}]}],
        1: Point(1, ("t",)),
        "named": Named(),
        "proxy": MappingProxyType({"k": frozenset({1})}),
        "rows": EncodedJSON('[{"tool_id":"x"}]'),
        "set": {3},
    }
    out = _jsonable(details)
    assert out == _reference(details)
    assert out[str(1)] == {"x": 1, "tags": ["t"]} and out["named"] == {"name": ["a", "b"], "3": None}
    assert type(out["rows"]) is EncodedJSON
