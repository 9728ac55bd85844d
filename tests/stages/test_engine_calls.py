"""What the search, select and plan stages share: here, the suite and gate figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qlab.stages.engine_calls import suite_and_gate_figures


def _count(dicts: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    calls.append(len(dicts))
    return {"cases": float(len(dicts)), "hits": float(sum(1 for d in dicts if d.get("hit")))}


calls: list[int] = []


def test_one_suite_is_figured_once_and_two_are_figured_together() -> None:
    calls.clear()
    per_suite, gate = suite_and_gate_figures({"a": [{"hit": True}, {}]}, _count)
    assert per_suite == {"a": {"cases": 2.0, "hits": 1.0}} and gate == per_suite["a"] and calls == [2]
    assert gate is not per_suite["a"]  # the gate's figures are its own dict
    calls.clear()
    per_suite, gate = suite_and_gate_figures({"a": [{"hit": True}], "b": [{}, {"hit": True}]}, _count)
    assert gate == {"cases": 3.0, "hits": 2.0} and calls == [1, 2, 3]
