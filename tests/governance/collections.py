"""A small collection and an engine factory over the built-in search index, for the learning tests."""

from __future__ import annotations

from qlab.collection.model import Collection, Parameter, Tool
from qlab.engine.index import SearchIndex
from qlab.project.model import Case, Origin


def tool(tool_id: str, summary: str, family: str, **extra: object) -> Tool:
    return Tool(
        id=tool_id, name=tool_id, family=family, source="demo", kind="openapi", summary=summary, **extra
    )  # type: ignore[arg-type]


def demo_collection() -> Collection:
    return Collection(
        tools=(
            tool("getMemberDeliveryDetail", "Get the delivery detail of a member", "deliveries",
                 parameters=(Parameter("memberNo", "path", True),)),
            tool("getMemberDeliveryList", "List the deliveries of a member", "deliveries"),
            tool("getLockerList", "List parcel lockers near an address", "lockers"),
            tool("getOrderList", "List orders", "orders"),
            tool("deleteOrder", "Delete an order", "orders"),
        ),
        digest="sha256:demo",
    )  # fmt: skip


class IndexEngine:
    """The search half of an engine, over the built-in index (what shadow rank needs)."""

    name = "index"

    def __init__(self, collection: Collection) -> None:
        self.index = SearchIndex(collection.tools)
        self.collection = collection

    def search(self, query: str, *, k: int):  # type: ignore[no-untyped-def]
        return self.index.search(query, k=k)


def case(
    case_id: str, query: str, expected: str, *, suite: str = "search_core", mode: str = "search"
) -> Case:
    return Case(
        id=case_id,
        mode=mode,  # type: ignore[arg-type]
        query=query,
        suite=suite,
        file=f"gates/{suite}/{case_id}.yaml",
        origin=Origin(f"gates/{suite}/{case_id}.yaml", 1, 1),
        expected_target=expected,
    )


class StubEngine(IndexEngine):
    """search (the built-in index) → select (the top row) → plan (the target, asking for missing required
    inputs): enough of an engine for the release gates."""

    name = "stub"

    def select(self, query, result, *, entities, llm_target):  # type: ignore[no-untyped-def]
        from qlab.engine.types import Selection

        top = result.rows[0].tool_id if result.rows else None
        return Selection(llm_target, top, False, ("selected_top_rank",) if top else ("no_candidates",))

    def plan(self, query, target, *, entities):  # type: ignore[no-untyped-def]
        from qlab.engine.types import InputSlot, Plan, PlanStep

        tool = self.collection.tool(target)
        assert tool is not None
        missing = [p for p in tool.required_parameters if p.name not in entities]
        slots = tuple(InputSlot(target, p.name, p.location) for p in missing)
        status = "needs_input" if missing else "synthesized"
        return Plan(f"plan-{target}", status, (PlanStep(target, dict(entities)),), slots)  # type: ignore[arg-type]
