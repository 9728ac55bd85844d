"""The run's state: stage details recorded as JSON data."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

from qlab.run.state import _jsonable


@dataclasses.dataclass
class Point:
    x: int
    tags: tuple[str, ...] = ()


class Tag(str):
    pass


class Named:
    def to_dict(self) -> dict[str, Any]:
        return {"name": ("a", "b"), 3: None}


def test_stage_details_become_json_data_whatever_they_hold() -> None:
    """Rule: dataclasses, objects with ``to_dict``, tuples, sets and read-only mappings become JSON data, keys
    become strings, and plain values (a str subclass included) are kept as they are."""
    details = {
        "plain": [1, 2.5, "x", None, True, {"n": [1, {"m": (1, 2)}]}],
        1: Point(1, ("t",)),
        "named": Named(),
        "proxy": MappingProxyType({"k": frozenset({1})}),
        "rows": Tag('[{"tool_id":"x"}]'),
        "set": {3},
    }
    out = _jsonable(details)
    assert out == {
        "plain": [1, 2.5, "x", None, True, {"n": [1, {"m": [1, 2]}]}],
        "1": {"x": 1, "tags": ["t"]},
        "named": {"name": ["a", "b"], "3": None},
        "proxy": {"k": [1]},
        "rows": '[{"tool_id":"x"}]',
        "set": [3],
    }
    assert type(out["rows"]) is Tag
