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


class _Ctx:
    class engine:
        name = "builtin"


def _raise(exc: Exception) -> Any:
    raise exc


def test_a_dependency_that_does_not_answer_is_its_reason_not_an_engine_error() -> None:
    from qlab.contracts.errors import DependencyError, InputError
    from qlab.contracts.reasons import is_infrastructure
    from qlab.contracts.results import CaseResult
    from qlab.stages.engine_calls import call

    down = CaseResult("p1", "plan_e2e", "plan")
    outage = DependencyError("LLM endpoint http://x: ConnectError", reason="llm_unreachable")
    assert call(down, "select", "target_selection", _Ctx(), lambda: _raise(outage)) is None  # type: ignore[arg-type]
    assert (down.status, down.failure and down.failure.reason) == ("error", "llm_unreachable")
    assert is_infrastructure("llm_unreachable")
    # an engine that answers badly is a failure of the product under test
    bad = CaseResult("p2", "plan_e2e", "plan")
    call(bad, "select", "target_selection", _Ctx(), lambda: _raise(InputError("reply: $: not JSON")))  # type: ignore[arg-type]
    assert (bad.status, bad.failure and bad.failure.reason) == ("error", "engine_error")
    assert not is_infrastructure("engine_error")
